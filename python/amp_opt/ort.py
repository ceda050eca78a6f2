"""Run ONNX models in ONNX Runtime through npm's onnxruntime-node.

Debian has no ONNX Runtime for Python; `make test` installs the npm package
into build/npm (git ignores it). AMP_OPT_NODE_MODULES names another
node_modules folder.
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

_TYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
          np.dtype(np.int64): "int64", np.dtype(np.int32): "int32",
          np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
          np.dtype(np.bool_): "bool", np.dtype(np.float16): "float16",
          np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16"}
_DTYPES = {name: dtype for dtype, name in _TYPES.items()}


class OrtUnavailable(RuntimeError):
    pass


def node_modules():
    """The node_modules folder holding onnxruntime-node, or None."""
    for folder in (os.environ.get("AMP_OPT_NODE_MODULES"),
                   os.path.join(REPO, "build", "npm", "node_modules")):
        if folder and os.path.isdir(os.path.join(folder, "onnxruntime-node")):
            return folder
    return None


def available():
    return shutil.which("node") is not None and node_modules() is not None


def _without_fed_initializers(model_path, feeds, folder):
    """onnxruntime-node ignores feeds for inputs that have an initializer:
    a copy of the model without those initializers, or model_path when
    there are none."""
    model = onnx.load(model_path)
    graph = model.graph
    fed = [init for init in graph.initializer if init.name in feeds]
    if not fed:
        return model_path
    kept = [init for init in graph.initializer if init.name not in feeds]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    return path


def run(model_path, feeds, optimize=False, timing=None):
    """Runs `model_path` on `feeds` (name -> numpy array); returns a dict of
    the outputs (name -> numpy array), in the model's output order. Feeds
    override initializers of the same name. With `timing` = {"repeat": N},
    also times N more runs and fills in "create_ms" and "run_ms" (a list)."""
    modules = node_modules()
    if shutil.which("node") is None or modules is None:
        raise OrtUnavailable(
            "ONNX Runtime is not installed: run `make ort` (npm "
            "onnxruntime-node into build/npm) or set AMP_OPT_NODE_MODULES")
    with tempfile.TemporaryDirectory() as tmp:
        model_path = _without_fed_initializers(model_path, feeds, tmp)
        inputs = {}
        for i, (name, value) in enumerate(feeds.items()):
            value = np.ascontiguousarray(value)
            if value.dtype not in _TYPES:
                raise TypeError(f"input '{name}': unsupported dtype "
                                f"{value.dtype}")
            file = os.path.join(tmp, f"in{i}.bin")
            value.tofile(file)
            inputs[name] = {"type": _TYPES[value.dtype],
                            "dims": list(value.shape), "file": file}
        request = os.path.join(tmp, "request.json")
        with open(request, "w") as f:
            json.dump({"model": os.path.abspath(model_path), "inputs": inputs,
                       "out": tmp, "optimize": optimize,
                       "repeat": (timing or {}).get("repeat", 0)}, f)
        env = dict(os.environ, NODE_PATH=modules)
        proc = subprocess.run(["node", os.path.join(HERE, "ort_run.js"),
                               request], env=env, capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"onnxruntime-node failed on {model_path}: "
                               f"{proc.stderr.strip()}")
        with open(os.path.join(tmp, "outputs.json")) as f:
            manifest = json.load(f)
        if timing is not None and timing.get("repeat"):
            with open(os.path.join(tmp, "timing.json")) as f:
                timing.update(json.load(f))
        outputs = {}
        for name, out in manifest.items():
            data = np.fromfile(out["file"], dtype=_DTYPES[out["type"]])
            outputs[name] = data.reshape(out["dims"])
        return outputs
