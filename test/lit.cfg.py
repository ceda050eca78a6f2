# -*- Python -*-
"""lit configuration of amp-opt's regression tests."""

import os
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst


def gpus_answering_nvidia_smi():
    """Whether nvidia-smi lists a GPU (False without the driver)."""
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                 text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listing.returncode == 0 and "GPU" in listing.stdout


config.name = "AMP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "utils", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.amp_obj_root, "test")
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
# amp-run's compiled parts go to the build folder, not the user's cache.
config.environment["AMP_JIT_CACHE"] = os.path.join(config.amp_obj_root,
                                                   "jit-cache")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

# Debian's Python packages (onnx, numpy) live with /usr/bin/python3 only.
python = "/usr/bin/python3"
utils = os.path.join(config.test_source_root, "utils")
config.substitutions.append(("%python", python))
config.substitutions.append(
    ("%gen_onnx", f"{python} {os.path.join(utils, 'gen_onnx.py')}"))
config.substitutions.append(
    ("%compare_onnx", f"{python} {os.path.join(utils, 'compare_onnx.py')}"))
config.substitutions.append(
    ("%onnx_info", f"{python} {os.path.join(utils, 'onnx_info.py')}"))

# The model zoo of training steps (python/amp_opt), which needs PyTorch.
package = os.path.join(config.amp_src_root, "python")
config.substitutions.append(
    ("%zoo", f"env PYTHONPATH={package} {python} -m amp_opt.zoo"))
if subprocess.run([python, "-c", "import torch"],
                  capture_output=True).returncode == 0:
    config.available_features.add("torch")
else:
    lit_config.note("zoo tests are skipped: /usr/bin/python3 has no torch")

# Real graphs exported by other projects, beside the repository.
corpus = os.path.normpath(
    os.path.join(config.amp_src_root, "..", "shared", "corpus", "external"))
if os.path.isdir(corpus):
    config.available_features.add("corpus")
    config.substitutions.append(("%corpus", corpus))
else:
    lit_config.note(f"corpus tests are skipped: {corpus} is absent")

if os.path.exists(os.path.join(config.amp_tools_dir, "amp-import-fuzzer")):
    config.available_features.add("fuzzer")

# cuda-toolkit: CMake found the CUDA toolkit (ptxas, cuBLASLt, cuDNN);
# cuda-device: a GPU answers nvidia-smi. Tests say REQUIRES: either.
if config.cuda_toolkit_bin_dir:
    config.available_features.add("cuda-toolkit")
    # The toolkit's stub libcuda: a driver that answers "no driver".
    config.substitutions.append(("%cuda_stubs", os.path.join(
        os.path.dirname(config.cuda_toolkit_bin_dir), "lib64", "stubs")))
    config.substitutions.append(
        ("%cuda_toolkit", os.path.dirname(config.cuda_toolkit_bin_dir)))
else:
    lit_config.note("CUDA tests are skipped: CMake found no CUDA toolkit")
if gpus_answering_nvidia_smi():
    config.available_features.add("cuda-device")
else:
    lit_config.note("GPU tests are skipped: nvidia-smi lists no GPU")

tool_dirs = [config.amp_tools_dir, config.llvm_tools_dir]
tools = ["amp-opt", "amp-translate", "amp-run", "not", "count"] + [
    ToolSubst(tool, unresolved="ignore")
    for tool in ("amp-import-fuzzer", "amp-pipeline-fuzzer",
                 "amp-parser-fuzzer", "amp-compile")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
