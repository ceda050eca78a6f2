"""The CUDA backend on a GPU (skipped without one; see docs/AmpCompile.md,
"GPU tests"). For every small zoo step and precision:
- amp-run --device=cuda matches amp-run on the CPU (numerics.
  backend_mismatch: within two units in the last place of the step's lowest
  precision, or no farther from the CPU's FP32 run than the CPU's own run
  in that precision), and the loss moves;
- the amp-compile library, trained through amp_opt.step_library from the
  CPU run's inputs in device memory, gives the CPU run's losses and
  outputs."""
import pytest

from amp_opt import api, numerics, step_library, zoo
from test_cuda_backend import (PRECISIONS, compile_library, has_cuda_device,
                               toolkit_found)

pytestmark = pytest.mark.skipif(
    not (toolkit_found() and has_cuda_device()),
    reason="needs the CUDA toolkit and a GPU (nvidia-smi)")

STEPS = 3


def amp_run(path, pipeline, device, folder, steps=STEPS):
    """Losses of `steps` steps and the last step's outputs (by name); the
    first step's inputs are left in folder/in."""
    records, _ = api.train(path, steps, pipeline, args=[
        f"--device={device}", "--save-inputs", str(folder / "in"),
        "--save-outputs", str(folder / "out")])
    losses = [record["loss"] for record in records]
    outputs = dict(api.SavedTensors(folder / "out"))
    return losses, outputs


def assert_matches(got, expected, fp32, ulp):
    """Every tensor of `got` is the CPU run's (numerics.backend_mismatch),
    `fp32` being the CPU's FP32 run of the same step."""
    assert got.keys() == expected.keys()
    problems = [f"{key}: {problem}" for key in sorted(expected)
                if (problem := numerics.backend_mismatch(
                    got[key], expected[key], ulp, fp32.get(key)))]
    assert not problems, problems


def cpu_runs(path, pipeline, folder, steps=STEPS):
    """The CPU run in `pipeline` (inputs in folder/cpu/in) and its FP32
    run: (losses, outputs, FP32 outputs)."""
    (folder / "cpu").mkdir()
    losses, outputs = amp_run(path, pipeline, "cpu", folder / "cpu", steps)
    assert losses[-1] != losses[0], "the CPU run did not train"
    fp32 = outputs
    if pipeline != PRECISIONS["fp32"][0]:
        (folder / "fp32").mkdir()
        _, fp32 = amp_run(path, PRECISIONS["fp32"][0], "cpu",
                          folder / "fp32", steps)
    return losses, outputs, fp32


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_on_the_gpu(name, precision, zoo_steps, tmp_path):
    pipeline, ulp = PRECISIONS[precision]
    if why := numerics.why_no_forced_step(name, precision):
        pytest.skip(why)
    path = zoo_steps[name, "sgd"]
    cpu_losses, cpu, fp32 = cpu_runs(path, pipeline, tmp_path)
    (tmp_path / "gpu").mkdir()
    gpu_losses, gpu = amp_run(path, pipeline, "cuda", tmp_path / "gpu")
    assert_matches({"losses": gpu_losses}, {"losses": cpu_losses}, {}, ulp)
    assert_matches(gpu, cpu, fp32, ulp)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_library_on_the_gpu(name, precision, zoo_steps, tmp_path):
    pipeline, ulp = PRECISIONS[precision]
    if why := numerics.why_no_forced_step(name, precision):
        pytest.skip(why)
    path = zoo_steps[name, "sgd"]
    cpu_losses, cpu, fp32 = cpu_runs(path, pipeline, tmp_path)
    library, _, _, _ = compile_library(path, pipeline, tmp_path / "lib")
    library = step_library.StepLibrary(library)
    inputs = {e["name"]: api.load_saved(tmp_path / "cpu" / "in", e["name"])
              for e in library.signature["inputs"]}
    step = step_library.DeviceStep(library, inputs)
    losses = step.train(STEPS)
    assert_matches({"losses": losses}, {"losses": cpu_losses}, {}, ulp)
    assert_matches({e["name"].replace("/", "_"): step.output(e["name"])
                    for e in library.signature["outputs"]}, cpu, fp32, ulp)


GRAPH_STEPS = 5


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_in_a_cuda_graph(name, precision, zoo_steps, tmp_path,
                                  monkeypatch):
    """AMP_CUDA_GRAPH=1: amp-run's step 1 runs uncaptured, step 2 is
    captured and launched, steps 3-5 replay the graph; all match the CPU."""
    pipeline, ulp = PRECISIONS[precision]
    if why := numerics.why_no_forced_step(name, precision):
        pytest.skip(why)
    path = zoo_steps[name, "sgd"]
    cpu_losses, cpu, fp32 = cpu_runs(path, pipeline, tmp_path, GRAPH_STEPS)
    monkeypatch.setenv("AMP_CUDA_GRAPH", "1")
    (tmp_path / "gpu").mkdir()
    records, stderr = api.train(path, GRAPH_STEPS, pipeline, args=[
        "--device=cuda", "--save-outputs", str(tmp_path / "gpu" / "out")])
    assert (f"amp-run: CUDA graph: 1 captured, {GRAPH_STEPS - 2} replayed"
            in stderr), stderr
    assert "refused" not in stderr, stderr
    gpu = dict(api.SavedTensors(tmp_path / "gpu" / "out"))
    assert_matches({"losses": [r["loss"] for r in records]},
                   {"losses": cpu_losses}, {}, ulp)
    assert_matches(gpu, cpu, fp32, ulp)


@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_step_library_in_cuda_graphs(name, zoo_steps, tmp_path,
                                         monkeypatch):
    """AMP_CUDA_GRAPH=1 in a library whose training loop swaps input and
    output buffers: two graphs (one per pointer set), the same losses as
    without graphs."""
    pipeline, ulp = PRECISIONS["fp32"]
    path = zoo_steps[name, "sgd"]
    cpu_losses, _, _ = cpu_runs(path, pipeline, tmp_path, GRAPH_STEPS + 1)
    monkeypatch.setenv("AMP_CUDA_GRAPH", "1")
    library, _, _, _ = compile_library(path, pipeline, tmp_path / "lib")
    library = step_library.StepLibrary(library)
    inputs = {e["name"]: api.load_saved(tmp_path / "cpu" / "in", e["name"])
              for e in library.signature["inputs"]}
    losses = step_library.DeviceStep(library, inputs).train(GRAPH_STEPS + 1)
    assert_matches({"losses": losses}, {"losses": cpu_losses}, {}, ulp)
