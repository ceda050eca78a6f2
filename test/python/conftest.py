import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import pytest  # noqa: E402

# amp-run's compiled parts go to the build folder, not the user's cache
# (tests that check the cache give their own --jit-cache).
os.environ.setdefault("AMP_JIT_CACHE", os.path.join(REPO, "build",
                                                    "jit-cache"))

from amp_opt import ort, zoo  # noqa: E402


@pytest.fixture
def needs_ort():
    if not ort.available():
        pytest.skip("ONNX Runtime is not installed (make ort)")


@pytest.fixture(scope="session")
def zoo_steps(tmp_path_factory):
    """Every zoo training step (small), exported once: {(model, optimizer):
    path}."""
    folder = tmp_path_factory.mktemp("zoo")
    paths = {}
    for name in zoo.MODELS:
        for optimizer in ("sgd", "adam"):
            path = str(folder / f"{name}_{optimizer}.onnx")
            zoo.export(name, optimizer, path)
            paths[name, optimizer] = path
    return paths
