"""The ONNX conformance node cases that amp-run passes on the CPU
(test_onnx_conformance.py), through the CUDA backend's kernels: its grid
loops, run last to first (--grid-loops --reverse-grid-loops), so that a
kernel whose threads depend on one another fails. A file of its own so
that pytest-xdist runs it beside the CPU cases."""
import numpy as np
import pytest

from test_onnx_conformance import (CASES, WRONG_REFERENCE, check_case,
                                   expected_error)


@pytest.mark.parametrize("name", sorted(
    name for name, case in CASES.items()
    if not expected_error(case) and name not in WRONG_REFERENCE
    and all(isinstance(v, (np.ndarray, np.generic))
            for v in case.data_sets[0][0])))
def test_conformance_case_in_grid_loops(name, tmp_path):
    check_case(name, tmp_path, ["--grid-loops", "--reverse-grid-loops"])
