"""Run an amp-compile step library from Python on a GPU (docs/AmpCompile.md).

Needs only numpy and the CUDA driver (libcuda.so.1), not amp-opt's build:

    lib = StepLibrary("step.so")
    step = DeviceStep(lib, {"fc.weight": w, "x": x, ...})  # numpy arrays
    losses = step.train(100)   # carries each output into its input
    weights = step.output("fc.weight.updated")

Buffers are plain device allocations (cuMemAlloc) on the primary context of
device 0, which the library uses too.
"""
import ctypes
import json
import os
import re
import time

import numpy as np

# numpy's types for the signature's; BF16 is held as its 16 bits.
DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
          "bfloat16": np.uint16, "bool": np.bool_, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
          "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
          "uint64": np.uint64}


class StepLibraryError(RuntimeError):
    pass


def to_bfloat16_bits(array):
    """FP32 values rounded to nearest even BF16, as uint16 bits."""
    bits = np.array(array, np.float32, order="C").view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def from_bfloat16_bits(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(
        np.float32)


def as_dtype(array, dtype):
    """`array` in the signature's dtype (FP32 files hold BF16 values)."""
    if dtype == "bfloat16":
        return to_bfloat16_bits(array)
    if dtype not in DTYPES:
        raise StepLibraryError(f"unsupported tensor type '{dtype}'")
    # np.array, not np.ascontiguousarray: that makes scalars 1-D.
    return np.array(array, DTYPES[dtype], order="C")


def as_float(array, dtype):
    """A buffer read back, as numbers (BF16 bits widened to FP32)."""
    return from_bfloat16_bits(array) if dtype == "bfloat16" else array


class Driver:
    """The CUDA driver API through ctypes: the primary context of a device,
    allocations and copies. Every failure raises with the driver's name."""

    def __init__(self, device=0):
        try:
            self.cuda = ctypes.CDLL("libcuda.so.1")
        except OSError as error:
            raise StepLibraryError(f"no CUDA driver: {error}") from None
        u64, ptr = ctypes.c_uint64, ctypes.c_void_p
        self.cuda.cuMemcpyHtoD_v2.argtypes = [u64, ptr, ctypes.c_size_t]
        self.cuda.cuMemcpyDtoH_v2.argtypes = [ptr, u64, ctypes.c_size_t]
        self.cuda.cuMemcpyDtoD_v2.argtypes = [u64, u64, ctypes.c_size_t]
        self.cuda.cuMemFree_v2.argtypes = [u64]
        self.check("cuInit", self.cuda.cuInit(0))
        handle = ctypes.c_int()
        self.check("cuDeviceGet", self.cuda.cuDeviceGet(ctypes.byref(handle),
                                                        device))
        self.context = ctypes.c_void_p()
        self.check("cuDevicePrimaryCtxRetain",
                   self.cuda.cuDevicePrimaryCtxRetain(
                       ctypes.byref(self.context), handle))
        self.check("cuCtxSetCurrent", self.cuda.cuCtxSetCurrent(self.context))
        name = ctypes.create_string_buffer(256)
        self.check("cuDeviceGetName",
                   self.cuda.cuDeviceGetName(name, 256, handle))
        self.name = name.value.decode()

    def check(self, what, result):
        if result != 0:
            text = ctypes.c_char_p()
            self.cuda.cuGetErrorString(result, ctypes.byref(text))
            raise StepLibraryError(
                f"{what}: {(text.value or b'error %d' % result).decode()}")

    def alloc(self, size):
        pointer = ctypes.c_uint64()
        self.check("cuMemAlloc", self.cuda.cuMemAlloc_v2(
            ctypes.byref(pointer), ctypes.c_size_t(max(size, 1))))
        return pointer.value

    def free(self, pointer):
        self.check("cuMemFree", self.cuda.cuMemFree_v2(pointer))

    def upload(self, pointer, array):
        self.check("cuMemcpyHtoD", self.cuda.cuMemcpyHtoD_v2(
            pointer, array.ctypes.data, array.nbytes))

    def download(self, pointer, dtype, shape):
        array = np.empty(shape, dtype)
        self.check("cuMemcpyDtoH", self.cuda.cuMemcpyDtoH_v2(
            array.ctypes.data, pointer, array.nbytes))
        return array

    def copy(self, target, source, size):
        self.check("cuMemcpyDtoD",
                   self.cuda.cuMemcpyDtoD_v2(target, source, size))

    def synchronize(self):
        self.check("cuCtxSynchronize", self.cuda.cuCtxSynchronize())


def entry_of(path):
    """amp-compile's default entry point: the file name without its last
    extension, as a C identifier."""
    stem = os.path.splitext(os.path.basename(str(path)))[0]
    entry = re.sub(r"[^A-Za-z0-9]", "_", stem)
    return "step_" + entry if not entry or entry[0].isdigit() else entry


class StepLibrary:
    """A step library: its entry point, error and signature."""

    def __init__(self, path, entry=None):
        self.library = ctypes.CDLL(str(path))
        if entry is None:
            entry = entry_of(path)
        if not hasattr(self.library, entry + "_signature"):
            raise StepLibraryError(f"{path} exports no step '{entry}' "
                                   "(name amp-compile's --entry)")
        self.run_step = getattr(self.library, entry)
        self.run_step.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.error = getattr(self.library, entry + "_error")
        self.error.restype = ctypes.c_char_p
        describe = getattr(self.library, entry + "_signature")
        describe.restype = ctypes.c_char_p
        self.signature = json.loads(describe())

    def __call__(self, inputs, outputs):
        """One step on device pointers; raises with the library's error."""
        pointers = [(ctypes.c_void_p * max(len(p), 1))(*p)
                    for p in (inputs, outputs)]
        if self.run_step(*pointers) != 0:
            raise StepLibraryError(self.error().decode())


class DeviceStep:
    """A step's inputs and outputs in device memory, trained in a loop that
    carries each output with `carries_to` into that input."""

    def __init__(self, library, values, driver=None):
        self.library = library
        self.driver = driver or Driver()
        signature = library.signature
        missing = [e["name"] for e in signature["inputs"]
                   if e["name"] not in values]
        if missing:
            raise StepLibraryError(f"no value for input(s) {missing}")
        self.inputs, self.outputs = [], []
        for entry in signature["inputs"]:
            array = as_dtype(values[entry["name"]], entry["dtype"])
            if list(array.shape) != list(entry["shape"]):
                raise StepLibraryError(
                    f"input '{entry['name']}' has shape {list(array.shape)};"
                    f" the step takes {entry['shape']}")
            self.inputs.append(self.driver.alloc(array.nbytes))
            self.driver.upload(self.inputs[-1], array)
        for entry in signature["outputs"]:
            size = int(np.prod(entry["shape"], dtype=np.int64)) * \
                np.dtype(DTYPES[entry["dtype"]]).itemsize
            self.outputs.append(self.driver.alloc(size))
        index = {e["name"]: i for i, e in enumerate(signature["inputs"])}
        self.carries = [(o, index[e["carries_to"]])
                        for o, e in enumerate(signature["outputs"])
                        if e.get("carries_to")]
        names = [e["name"] for e in signature["outputs"]]
        self.loss = names.index(signature["loss"]) \
            if signature.get("loss") in names else None

    def step(self):
        """One step, then the carries (by swapping the two buffers)."""
        self.library(self.inputs, self.outputs)
        for output, input in self.carries:
            self.inputs[input], self.outputs[output] = \
                self.outputs[output], self.inputs[input]

    def output(self, name):
        """An output of the last step, as numbers. Carried outputs are read
        from the input they were carried into."""
        signature = self.library.signature
        for o, entry in enumerate(signature["outputs"]):
            if entry["name"] == name:
                pointer = self.outputs[o]
                for output, input in self.carries:
                    if output == o:
                        pointer = self.inputs[input]
                return as_float(self.driver.download(
                    pointer, DTYPES[entry["dtype"]], entry["shape"]),
                    entry["dtype"])
        raise StepLibraryError(f"no output '{name}'")

    def last_loss(self):
        if self.loss is None:
            return None
        entry = self.library.signature["outputs"][self.loss]
        return float(self.output(entry["name"]).reshape(-1)[0])

    def train(self, steps):
        """Losses of `steps` steps."""
        losses = []
        for _ in range(steps):
            self.step()
            losses.append(self.last_loss())
        return losses

    def time_steps(self, steps):
        """Mean milliseconds per step over `steps` steps (each step waits
        for its GPU work)."""
        self.driver.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            self.step()
        self.driver.synchronize()
        return (time.perf_counter() - start) * 1e3 / steps

    def close(self):
        for pointer in self.inputs + self.outputs:
            self.driver.free(pointer)
        self.inputs, self.outputs = [], []
