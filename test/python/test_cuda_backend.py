"""The CUDA backend without a GPU. Every small zoo step, in every precision:
- its kernels, as block and thread loops run sequentially on the CPU
  (amp-run --grid-loops), give the CPU path's outputs;
- --amp-lower-to-cuda compiles it (ptxas accepts every kernel for sm_80 and
  sm_90, merged into one fatbin per kernel) to host code that is LLVM
  dialect only (needs the CUDA toolkit; skipped without it)."""
import os
import re
import subprocess

import numpy as np
import pytest

from amp_opt import api, zoo
from test_amp_run_contractions import RECORD_PRECISIONS

# The records' tolerances: here too the non-GEMM contractions sum in
# another order (grid loops, not the CPU's vectorized ones), and the GEMMs
# go through their records.
PRECISIONS = RECORD_PRECISIONS


def run_step(path, pipeline, folder, extra):
    lowered = folder.with_suffix(".mlir")
    run = subprocess.run(
        [api.find_tool("amp-run"), path, "--steps", "1",
         f"--amp-pipeline={pipeline}", "--save-outputs", str(folder),
         "--dump-lowered", str(lowered)] + extra,
        check=True, capture_output=True, text=True)
    outputs = {f: np.load(folder / f) for f in sorted(os.listdir(folder))}
    return outputs, lowered.read_text(), run.stderr


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_kernels_run_as_grid_loops(name, precision, zoo_steps,
                                            tmp_path):
    """The grid loops (with the GEMMs through their records, as on the
    GPU) give the CPU path's outputs: within two units in the last place of
    the step's lowest precision, and 99% within FP32's rounding."""
    pipeline, ulp = PRECISIONS[precision]
    if name == "cnn" and precision == "fp8":
        pytest.skip("the CNN has no FP8-eligible GEMM")
    path = zoo_steps[name, "sgd"]
    cpu, cpu_text, _ = run_step(path, pipeline, tmp_path / "cpu", [])
    grid, grid_text, log = run_step(path, pipeline, tmp_path / "grid",
                                    ["--grid-loops"])
    # The grid pipeline ran: every GEMM through a record, none via BLAS.
    gemms = len(re.findall(r"call @amp_contract_", cpu_text))
    assert gemms > 0
    assert "call @amp_contract_" not in grid_text
    assert f"GEMM records: {gemms} of {gemms} GEMMs (the others in grid " \
           "loops)" in log
    assert grid.keys() == cpu.keys()
    for f, expected in cpu.items():
        got = grid[f].astype(np.float64)
        expected = expected.astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=2 * ulp, atol=1e-6,
                                   err_msg=f)
        close = np.isclose(got, expected, rtol=1e-5, atol=1e-6)
        assert close.mean() >= 0.99, f


def toolkit_found():
    """Whether amp-opt has a CUDA toolkit to lower with (the one CMake
    found): it lowers an empty module."""
    run = subprocess.run([api.find_tool("amp-opt"), "--amp-lower-to-cuda",
                          "-o", os.devnull], input="module {}", text=True,
                         capture_output=True)
    return run.returncode == 0


@pytest.mark.skipif(not toolkit_found(),
                    reason="amp-opt has no CUDA toolkit (ptxas)")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_compiles_for_cuda(name, precision, zoo_steps, tmp_path):
    pipeline, _ = PRECISIONS[precision]
    if name == "cnn" and precision == "fp8":
        pytest.skip("the CNN has no FP8-eligible GEMM")
    converted = tmp_path / "converted.mlir"
    subprocess.run([api.find_tool("amp-opt"), zoo_steps[name, "sgd"],
                    f"--amp-pipeline={pipeline}", "-o", str(converted)],
                   check=True, capture_output=True)
    lowered = tmp_path / "cuda.mlir"
    subprocess.run([api.find_tool("amp-opt"), str(converted),
                    "--amp-lower-to-cuda", "-o", str(lowered)], check=True,
                   capture_output=True)
    text = lowered.read_text()
    kernels = len(re.findall(r"^  gpu\.binary @", text, re.MULTILINE))
    launches = len(re.findall(r"gpu\.launch_func", text))
    assert kernels > 0 and launches >= kernels
    # One fatbin per kernel (fatbinary's magic, 0xBA55ED50), no cubin left.
    objects = re.findall(r"#gpu\.object<#nvvm\.target<[^>]*>, \"(.{8})",
                         text)
    assert len(objects) == kernels
    assert all(o.startswith("P\\ED") for o in objects), objects[:3]
    # Host code: the LLVM dialect, GEMMs as records.
    assert "func.func" not in text and "unrealized_conversion_cast" not in text
    assert "llvm.call @amp_gemm_" in text
