"""Training steps as other exporters write them (make_fx + torch.onnx, no
metadata, the implicit seed, other names: export_training_step(plain=...)),
converted with only the loss named (docs/TrainingGraphs.md):

- amp-analyze-training finds the step, its seed, every parameter and every
  update from the dataflow;
- in ONNX Runtime the FP16 step tracks FP32, with dynamic loss scaling, and
  a forced overflow leaves parameters and optimizer state as they were and
  halves the scale;
- amp-run trains them 100 steps in FP32 and in FP16, the curves within 2%
  of the first loss of each other (after as many applied updates: loss
  scaling skips the GPT's first steps);
- amp-run finds updates by their arithmetic where names say nothing, says
  so when nothing shows them, and --carry fixes it.
"""
import json
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
import torch

from amp_opt import api, export, numerics, verify, zoo
from amp_opt.numerics import FORCED

HERE = os.path.dirname(os.path.abspath(__file__))
AMP_OPT = os.path.join(HERE, "..", "..", "build", "bin", "amp-opt")

# (model, optimizer) -> the step's naming convention, loss name and other
# export arguments: every convention of export.PLAIN_CONVENTIONS once, with
# weight decay, clipping by the global norm and extra outputs.
STEPS = {
    ("mlp", "sgd"): dict(plain="suffix_new", loss_name="train_loss"),
    ("mlp", "adam"): dict(plain="prime", loss_name="objective"),
    ("cnn", "sgd"): dict(plain="next", loss_name="loss"),
    ("cnn", "adam"): dict(plain="dot_out", loss_name="loss"),
    ("transformer", "sgd"): dict(plain="updated_prefix", loss_name="loss",
                                 weight_decay=0.01),
    ("transformer", "adam"): dict(plain="new_param", loss_name="loss",
                                  clip_grad_norm=1.0, output_logits=True),
    ("gpt", "sgd"): dict(plain="suffix_out", loss_name="lm_loss"),
    ("gpt", "adamw"): dict(plain="dot_updated", loss_name="lm_loss"),
}


@pytest.fixture(scope="module")
def plain_steps(tmp_path_factory):
    """{(model, optimizer): (path, export info, export arguments)}."""
    folder = tmp_path_factory.mktemp("plain")
    steps = {}
    for (name, optimizer), kwargs in STEPS.items():
        path = str(folder / f"{name}_{optimizer}.onnx")
        info = zoo.export(name, optimizer, path, **kwargs)
        steps[name, optimizer] = path, info, kwargs
    return steps


def carried(info, kwargs):
    """Output -> input of every updated input, from the exporter's names:
    the truth the analysis is checked against."""
    naming = export._Naming(kwargs["plain"])
    outputs = set(info["outputs"])
    return {naming.updated(name): name for name in info["inputs"]
            if naming.updated(name) in outputs}


def data(name):
    _, inputs, targets, _ = zoo.build(name)
    feeds = {f"input{i}": t.numpy() for i, t in enumerate(inputs)}
    feeds.update({f"target{i}": t.numpy() for i, t in enumerate(targets)})
    return feeds


def largest_gap(fp32, amp):
    """The largest difference of the AMP loss curve from FP32's, relative
    to the first loss. A step loss scaling skipped applies no update, so
    each AMP loss is compared with FP32's after as many applied updates."""
    b = np.array([r["loss"] for r in amp])
    return (np.abs(b - numerics.fp32_losses_after_applied(fp32, amp)).max()
            / abs(fp32[0]["loss"]))


def run_amp_opt(path, options, out=os.devnull):
    proc = subprocess.run([AMP_OPT, path, options, "-o", out],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_every_step_has_no_metadata(plain_steps):
    for path, _, _ in plain_steps.values():
        model = onnx.load(path)
        assert not model.metadata_props
        assert not any("seed" in i.name for i in model.graph.input)


@pytest.mark.parametrize("key", sorted(STEPS))
def test_analysis_finds_the_step(key, plain_steps):
    path, info, kwargs = plain_steps[key]
    loss = kwargs["loss_name"]
    stderr = run_amp_opt(path, f"--amp-analyze-training=remarks=true "
                               f"loss={loss}")
    model, _, _, _ = zoo.build(key[0])
    num_params = len(list(model.parameters()))
    expected = carried(info, kwargs)
    num_buffers = len(list(model.buffers()))
    print(f"{key}: {stderr.strip()}")
    assert (f"training_step: loss '{loss}', 1 seeds, {num_params} "
            f"parameters with gradients, {len(expected) - num_buffers} "
            f"updates, {num_buffers} buffers") in stderr
    assert "warning" not in stderr


@pytest.mark.parametrize("key", sorted(STEPS))
def test_fp16_step_tracks_fp32_in_onnx_runtime(key, plain_steps, tmp_path,
                                               needs_ort):
    path, info, kwargs = plain_steps[key]
    loss = kwargs["loss_name"]
    out, report = str(tmp_path / "fp16.onnx"), str(tmp_path / "report.json")
    run_amp_opt(path, f"--amp-pipeline=precision=fp16 {FORCED} loss={loss} "
                      f"report={report}", out)
    # The conversion happened, with loss scaling state in and out.
    with open(report) as f:
        assert json.load(f)["ops"]["low_precision"] > 0
    model = onnx.load(out)
    assert verify.roles(model)["loss_scaling"]["mode"] == "dynamic"
    assert "amp.loss_scale" in [i.name for i in model.graph.input]
    assert "amp.loss_scale.updated" in [o.name for o in model.graph.output]
    # One unscale per distinct gradient (the two biases of a residual
    # block's BatchNorms share theirs), and the optimizer stays FP32.
    roles = training_attr(path, f"loss={loss}")
    assert len(roles["parameters"]) == len(
        list(zoo.build(key[0])[0].parameters()))
    unscaled, low = verify.low_precision_after_unscale(model)
    assert len(unscaled) == len(set(roles["unscale"])) >= len(
        set(roles["gradients"]))
    assert not low, low
    feeds, pairs = data(key[0]), carried(info, kwargs)
    fp32, _ = verify.run_carried(path, feeds, pairs, loss, steps=2)
    fp16, state = verify.run_carried(out, feeds, pairs, loss, steps=2)
    print(f"{key}: loss FP32 {fp32}, FP16 {fp16}")
    assert fp32[1] < fp32[0]
    np.testing.assert_allclose(fp16, fp32, rtol=5e-3)
    assert state["amp.loss_scale"] == 65536.0
    assert state["amp.growth_count"] == 2


# ONNX Runtime's CPU provider runs the MLP's Gemms in FP32 (no FP16 Gemm
# kernel), so a large scale cannot overflow there.
@pytest.mark.parametrize("key", [k for k in sorted(STEPS) if k[0] != "mlp"])
def test_overflow_keeps_parameters_and_state(key, plain_steps, tmp_path,
                                             needs_ort):
    path, info, kwargs = plain_steps[key]
    loss = kwargs["loss_name"]
    out = str(tmp_path / "overflow.onnx")
    run_amp_opt(path, f"--amp-pipeline=precision=fp16 {FORCED} loss={loss} "
                      f"init-scale=1e30", out)
    pairs = carried(info, kwargs)
    before = {i.name: onnx.numpy_helper.to_array(i)
              for i in onnx.load(path).graph.initializer}
    _, after = verify.run_carried(out, data(key[0]), pairs, loss, steps=1)
    buffers = {name for name in before if name.startswith("buffer.")}
    kept = [name for name in pairs.values() if name not in buffers]
    changed = [name for name in kept
               if not np.array_equal(before[name], after[name])]
    assert not changed, f"changed after an overflow: {changed}"
    assert after["amp.loss_scale"] == np.float32(5e29)
    assert after["amp.growth_count"] == 0


@pytest.mark.parametrize("key", sorted(STEPS))
def test_amp_run_trains_fp16_as_fp32(key, plain_steps):
    path, _, kwargs = plain_steps[key]
    loss = kwargs["loss_name"]
    fp32, _ = api.train(path, 100, args=("--loss", loss))
    fp16, _ = api.train(path, 100, f"precision=fp16 {FORCED} loss={loss}")
    a = np.array([r["loss"] for r in fp32])
    b = np.array([r["loss"] for r in fp16])
    gap = largest_gap(fp32, fp16)
    print(f"{key}: FP32 {a[0]:.4f} -> {a[-1]:.4f}, FP16 {b[0]:.4f} -> "
          f"{b[-1]:.4f}, largest gap {gap:.2%} of the first loss, "
          f"{sum(r['skipped'] for r in fp16)} skipped")
    assert a[-1] < 0.9 * a[0], "FP32 did not train"
    assert b[-1] < 0.9 * b[0], "FP16 did not train"
    assert fp16[0]["loss_scale"] == 65536
    assert gap <= 0.02


def test_amp_run_finds_or_asks_for_updates(plain_steps, tmp_path):
    """Outputs named by no convention: amp-run trains when their arithmetic
    shows the updates; when nothing does, it warns instead of repeating
    step 1 silently, and --carry (or updates=) names them."""
    path, info, kwargs = plain_steps["mlp", "sgd"]
    pairs = carried(info, kwargs)
    loss = kwargs["loss_name"]
    renamed = {out: f"after_step/{i}" for i, out in enumerate(pairs)}

    def rewrite(hide):
        """The step with the updates renamed and, with `hide`, each behind
        an identity Transpose, which no update arithmetic reads through."""
        model = onnx.load(path)
        graph = model.graph
        inner = {out: (f"{new}.hidden" if hide else new)
                 for out, new in renamed.items()}
        for node in graph.node:
            node.input[:] = [inner.get(i, i) for i in node.input]
            node.output[:] = [inner.get(o, o) for o in node.output]
        for output in graph.output:
            if output.name in renamed:
                if hide:
                    rank = len(output.type.tensor_type.shape.dim)
                    graph.node.append(onnx.helper.make_node(
                        "Transpose", [inner[output.name]],
                        [renamed[output.name]], perm=list(range(rank))))
                output.name = renamed[output.name]
        out = str(tmp_path / f"{'hidden' if hide else 'renamed'}.onnx")
        onnx.save(model, out)
        return out

    records, stderr = api.train(rewrite(False), 3, args=("--loss", loss))
    assert "repeats" not in stderr
    assert records[2]["loss"] < records[0]["loss"]

    hidden = rewrite(True)
    records, stderr = api.train(hidden, 3, args=("--loss", loss))
    assert "no output updates an input, so every step repeats the first" \
        in stderr
    assert f"'{loss}' has a backward" in stderr
    assert len({r["loss"] for r in records}) == 1
    carry = []
    for out, name in pairs.items():
        carry += ["--carry", f"{renamed[out]}:{name}"]
    records, stderr = api.train(hidden, 3, args=("--loss", loss, *carry))
    assert "repeats" not in stderr
    assert records[2]["loss"] < records[0]["loss"]
    updates = ",".join(f"{name}:{renamed[out]}" for out, name in
                       pairs.items())
    records, _ = api.train(hidden, 3, f"precision=fp16 {FORCED} loss={loss} "
                                      f"updates={updates}")
    assert records[2]["loss"] < records[0]["loss"]


class TiedAutoencoder(torch.nn.Module):
    """Not a zoo model: the decoder reuses the encoder's weight, with
    LayerNorm and GELU between, trained on a mean squared error."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(16, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.dec_bias = torch.nn.Parameter(torch.zeros(16))

    def forward(self, x):
        h = torch.nn.functional.gelu(self.norm(self.enc(x)))
        return torch.nn.functional.linear(h, self.enc.weight.t(),
                                          self.dec_bias)


def test_tied_autoencoder_beyond_the_zoo(tmp_path, needs_ort):
    torch.manual_seed(0)
    model, x = TiedAutoencoder(), torch.randn(32, 16)
    path = str(tmp_path / "autoencoder.onnx")
    kwargs = dict(plain="new_param", loss_name="reconstruction")
    info = export.export_training_step(
        model, (x,), (x,), torch.nn.functional.mse_loss, path,
        optimizer="adamw", lr=1e-2, clip_grad_norm=0.5, **kwargs)
    stderr = run_amp_opt(path, "--amp-analyze-training=remarks=true "
                               "loss=reconstruction")
    assert ("training_step: loss 'reconstruction', 1 seeds, 5 parameters "
            "with gradients, 16 updates, 0 buffers") in stderr
    out = str(tmp_path / "fp16.onnx")
    run_amp_opt(path, f"--amp-pipeline=precision=fp16 {FORCED} "
                      f"loss=reconstruction", out)
    feeds = {"input0": x.numpy(), "target0": x.numpy()}
    pairs = carried(info, kwargs)
    fp32, _ = verify.run_carried(path, feeds, pairs, "reconstruction", 3)
    fp16, state = verify.run_carried(out, feeds, pairs, "reconstruction", 3)
    assert fp32[2] < fp32[0]
    np.testing.assert_allclose(fp16, fp32, rtol=5e-3)
    assert state["amp.growth_count"] == 3
    fp32, _ = api.train(path, 100, args=("--loss", "reconstruction"))
    fp16, _ = api.train(path, 100, f"precision=fp16 {FORCED} "
                                   f"loss=reconstruction")
    assert fp32[-1]["loss"] < 0.9 * fp32[0]["loss"]
    assert fp16[-1]["loss"] < 0.9 * fp16[0]["loss"]
    assert largest_gap(fp32, fp16) <= 0.02


def opaque(path, out):
    """The step with every input, output and value renamed as torch.onnx
    does without names (`onnx::Mul_0`, `17`): nothing but the arithmetic
    says what updates what. Returns the map from old to new names."""
    model = onnx.load(path)
    graph = model.graph
    names = {}
    for i, value in enumerate(graph.input):
        names[value.name] = f"onnx::In_{i}"
    for i, value in enumerate(graph.output):
        names[value.name] = str(100 + i)
    for value in list(graph.input) + list(graph.output):
        value.name = names[value.name]
    for init in graph.initializer:
        init.name = names.get(init.name, init.name)
    for node in graph.node:
        node.input[:] = [names.get(n, n) for n in node.input]
        node.output[:] = [names.get(n, n) for n in node.output]
    onnx.save(model, out)
    return names


@pytest.mark.parametrize("key", sorted(STEPS))
def test_opaque_names_found_by_arithmetic(key, plain_steps, tmp_path):
    path, info, kwargs = plain_steps[key]
    out = str(tmp_path / "opaque.onnx")
    names = opaque(path, out)
    stderr = run_amp_opt(out, "--amp-analyze-training=remarks=true")
    print(f"{key}: {stderr.strip()}")
    model, _, _, _ = zoo.build(key[0])
    num_params = len(list(model.parameters()))
    # Every update but the constant buffers (the GPT's masks, returned
    # reshaped) is found, and the loss is the one output left.
    num_buffers = sum(name.endswith(("running_mean", "running_var",
                                     "num_batches_tracked"))
                      for name, _ in model.named_buffers())
    num_updates = len(carried(info, kwargs)) - len(list(model.buffers()))
    loss = names[kwargs["loss_name"]]
    assert (f"training_step: loss '{loss}', 1 seeds, {num_params} parameters "
            f"with gradients, {num_updates} updates, {num_buffers} buffers"
            ) in stderr
    assert "warning" not in stderr


@pytest.mark.parametrize("key", [("cnn", "sgd"), ("gpt", "adamw")])
def test_opaque_names_train_in_amp_run_and_onnx_runtime(key, plain_steps,
                                                        tmp_path, needs_ort):
    path, info, kwargs = plain_steps[key]
    out = str(tmp_path / "opaque.onnx")
    names = opaque(path, out)
    fp16_path = str(tmp_path / "opaque.fp16.onnx")
    run_amp_opt(out, f"--amp-pipeline=precision=fp16 {FORCED}", fp16_path)
    pairs = {names[o]: names[i] for o, i in carried(info, kwargs).items()}
    feeds = {names[k]: v for k, v in data(key[0]).items()}
    loss = names[kwargs["loss_name"]]
    fp32, _ = verify.run_carried(out, feeds, pairs, loss, steps=2)
    fp16, state = verify.run_carried(fp16_path, feeds, pairs, loss, steps=2)
    assert fp32[1] < fp32[0]
    np.testing.assert_allclose(fp16, fp32, rtol=5e-3)
    assert state["amp.growth_count"] == 2
    a, _ = api.train(out, 100)
    b, _ = api.train(out, 100, f"precision=fp16 {FORCED}")
    assert a[-1]["loss"] < 0.9 * a[0]["loss"]
    assert largest_gap(a, b) <= 0.02


def training_attr(path, options=""):
    """amp-analyze-training's amp.training attribute: {key: names}."""
    proc = subprocess.run([AMP_OPT, path, f"--amp-analyze-training={options}",
                           "--mlir-print-debuginfo=false"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = re.search(r"amp\.training = \{(.*?)\}\}?\s*[,}]", proc.stdout,
                     re.S).group(1)
    fields = {}
    for key in ("parameters", "gradients", "seeds", "unscale"):
        found = re.search(rf"\b{key} = \[(.*?)\]", text)
        fields[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1))
    fields["kind"] = re.search(r'kind = "([^"]*)"', text).group(1)
    return fields


@pytest.mark.parametrize("name", zoo.MODELS)
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_dataflow_agrees_with_our_metadata(name, optimizer, zoo_steps,
                                           tmp_path):
    """Our exporter's steps without their metadata: the dataflow finds the
    parameters and gradients the metadata names."""
    path = zoo_steps[name, optimizer]
    marked = training_attr(path)
    model = onnx.load(path)
    del model.metadata_props[:]
    bare = str(tmp_path / "bare.onnx")
    onnx.save(model, bare)
    found = training_attr(bare, "loss=loss")
    assert marked["kind"] == "amp_opt.training_step"
    assert found["kind"] == "training_step"
    assert found["seeds"] == ["loss.seed"]
    model, _, _, _ = zoo.build(name)
    assert len(found["parameters"]) == len(list(model.parameters()))
    assert dict(zip(found["parameters"], found["gradients"])) == dict(
        zip(marked["parameters"], marked["gradients"]))
    assert found["unscale"] == found["gradients"]
