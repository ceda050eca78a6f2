import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import pytest  # noqa: E402

from amp_opt import ort  # noqa: E402


@pytest.fixture
def needs_ort():
    if not ort.available():
        pytest.skip("ONNX Runtime is not installed (make ort)")
