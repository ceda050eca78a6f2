"""The ONNX conformance node cases that amp-run passes on the CPU
(test_onnx_conformance.py), through the CUDA backend's kernels: its grid
loops, run last to first (--grid-loops --reverse-grid-loops), so that a
kernel whose threads depend on one another fails; and, where the CUDA
toolkit is, one case of each op type compiled into a step library. A file
of its own so that pytest-xdist runs it beside the CPU cases."""
import subprocess

import numpy as np
import onnx
import pytest

from amp_opt import api

from test_cuda_backend import check_kernels, compile_library, toolkit_found
from test_onnx_conformance import (CASES, WRONG_REFERENCE, assert_clean_error,
                                   check_case, expected_error, prepare_model)


@pytest.mark.parametrize("name", sorted(
    name for name, case in CASES.items()
    if not expected_error(case) and name not in WRONG_REFERENCE
    and all(isinstance(v, (np.ndarray, np.generic))
            for v in case.data_sets[0][0])))
def test_conformance_case_in_grid_loops(name, tmp_path):
    check_case(name, tmp_path, ["--grid-loops", "--reverse-grid-loops"])


# Cases the CPU runs and the CUDA backend refuses, with its error.
CUDA_ERRORS = {
    # The condition is a graph input, which the host cannot read from
    # device memory.
    "test_if": "an If lowers for CUDA only when its condition is a constant",
}


def first_case_of_each_op():
    """The first passing case (by name) of each op type the cases lower."""
    firsts = {}
    for name, case in sorted(CASES.items()):
        if (expected_error(case) or name in WRONG_REFERENCE
                or not all(isinstance(v, (np.ndarray, np.generic))
                           for v in case.data_sets[0][0])):
            continue
        firsts.setdefault(case.model.graph.node[-1].op_type, name)
    return sorted(firsts.values())


# Every op type that lowers compiles through the CUDA pipeline: ptxas
# accepts its kernels for sm_80 and sm_90 and the library links.
@pytest.mark.skipif(not toolkit_found(),
                    reason="no CUDA toolkit (the backend is not built)")
@pytest.mark.parametrize("name", first_case_of_each_op())
def test_conformance_op_compiles_to_a_library(name, tmp_path):
    case = CASES[name]
    model, _ = prepare_model(case.model, case.data_sets[0][0])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    if name in CUDA_ERRORS:
        run = subprocess.run([api.find_tool("amp-compile"), str(path), "-o",
                              str(tmp_path / "step.so")],
                             capture_output=True, text=True)
        assert_clean_error(run, CUDA_ERRORS[name])
        assert not (tmp_path / "step.so").exists()
        return
    library, header, text, summary = compile_library(path, None, tmp_path)
    assert library.exists() and header.exists(), summary
    check_kernels(text, summary)
