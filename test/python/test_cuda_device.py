"""The CUDA backend on a GPU (skipped without one; see docs/AmpCompile.md,
"GPU tests"). For every small zoo step and precision:
- amp-run --device=cuda matches amp-run on the CPU: FP32 within 1e-5, AMP
  within two units in the last place of its lowest precision, and the loss
  moves;
- the amp-compile library, called through ctypes on the CPU run's inputs
  in CUDA managed memory, gives the CPU run's outputs."""
import ctypes
import json
import os
import subprocess

import numpy as np
import pytest

from amp_opt import api, zoo
from test_cuda_backend import (PRECISIONS, compile_library, has_cuda_device,
                               toolkit_found)

pytestmark = pytest.mark.skipif(
    not (toolkit_found() and has_cuda_device()),
    reason="needs the CUDA toolkit and a GPU (nvidia-smi)")

STEPS = 3


def amp_run(path, pipeline, device, folder, steps=STEPS):
    """Losses of `steps` steps and the last step's outputs (by name); the
    first step's inputs are left in folder/in."""
    args = [api.find_tool("amp-run"), path, "--steps", str(steps),
            f"--device={device}", "--save-inputs", str(folder / "in"),
            "--save-outputs", str(folder / "out")]
    if pipeline:
        args.append(f"--amp-pipeline={pipeline}")
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    losses = [json.loads(line)["loss"] for line in run.stdout.splitlines()]
    outputs = {f[:-4]: np.load(folder / "out" / f)
               for f in os.listdir(folder / "out")}
    return losses, outputs


def assert_close(got, expected, ulp, what):
    got = np.asarray(got, np.float64)
    expected = np.asarray(expected, np.float64)
    np.testing.assert_allclose(got, expected, rtol=2 * ulp, atol=1e-6,
                               err_msg=what)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_on_the_gpu(name, precision, zoo_steps, tmp_path):
    pipeline, ulp = PRECISIONS[precision]
    if name == "cnn" and precision == "fp8":
        pytest.skip("the CNN has no FP8-eligible GEMM")
    path = zoo_steps[name, "sgd"]
    (tmp_path / "cpu").mkdir()
    (tmp_path / "gpu").mkdir()
    cpu_losses, cpu = amp_run(path, pipeline, "cpu", tmp_path / "cpu")
    gpu_losses, gpu = amp_run(path, pipeline, "cuda", tmp_path / "gpu")
    assert cpu_losses[-1] != cpu_losses[0], "the CPU run did not train"
    assert_close(gpu_losses, cpu_losses, ulp, "losses")
    assert gpu.keys() == cpu.keys()
    for key, expected in cpu.items():
        assert_close(gpu[key], expected, ulp, key)


class ManagedMemory:
    """CUDA managed buffers through the driver (libcuda), on the primary
    context of device 0 that the step library uses too."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        assert self.cuda.cuInit(0) == 0
        device = ctypes.c_int()
        assert self.cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
        self.context = ctypes.c_void_p()
        assert self.cuda.cuDevicePrimaryCtxRetain(
            ctypes.byref(self.context), device) == 0
        assert self.cuda.cuCtxSetCurrent(self.context) == 0
        self.buffers = []

    def copy_of(self, array):
        pointer = ctypes.c_uint64()
        assert self.cuda.cuMemAllocManaged(ctypes.byref(pointer),
                                           max(array.nbytes, 1), 1) == 0
        ctypes.memmove(pointer.value, array.ctypes.data, array.nbytes)
        self.buffers.append(pointer)
        return pointer.value

    def read(self, pointer, dtype, shape):
        out = np.empty(shape, dtype)
        ctypes.memmove(out.ctypes.data, pointer, out.nbytes)
        return out


DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
          "bfloat16": np.uint16, "bool": np.bool_, "int8": np.int8,
          "int32": np.int32, "int64": np.int64}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_library_on_the_gpu(name, precision, zoo_steps, tmp_path):
    pipeline, ulp = PRECISIONS[precision]
    if name == "cnn" and precision == "fp8":
        pytest.skip("the CNN has no FP8-eligible GEMM")
    path = zoo_steps[name, "sgd"]
    folder = tmp_path / "cpu"
    folder.mkdir()
    amp_run(path, pipeline, "cpu", folder, steps=1)
    library, _, _, _ = compile_library(path, pipeline, tmp_path / "lib")
    lib = ctypes.CDLL(str(library))
    lib.step_signature.restype = ctypes.c_char_p
    lib.step_error.restype = ctypes.c_char_p
    signature = json.loads(lib.step_signature())
    memory = ManagedMemory()

    def npy(kind, entry):
        return np.load(folder / kind / (entry["name"].replace("/", "_") +
                                        ".npy"))

    inputs = [memory.copy_of(np.ascontiguousarray(npy("in", e)))
              for e in signature["inputs"]]
    outputs = [memory.copy_of(np.zeros(e["shape"], DTYPES[e["dtype"]]))
               for e in signature["outputs"]]
    status = lib.step((ctypes.c_void_p * len(inputs))(*inputs),
                      (ctypes.c_void_p * len(outputs))(*outputs))
    assert status == 0, lib.step_error()
    for entry, pointer in zip(signature["outputs"], outputs):
        got = memory.read(pointer, DTYPES[entry["dtype"]], entry["shape"])
        assert_close(got, npy("out", entry), ulp, entry["name"])
