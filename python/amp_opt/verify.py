"""Check an exported training step against eager PyTorch.

run_exported() runs the ONNX step in ONNX Runtime for some steps, feeding
each step's updated parameters, buffers and optimizer state into the next;
run_eager() does the same steps with the model and torch.optim itself;
compare() gives the error of every tensor. The error of a tensor is
max|onnx - eager| / max(max|eager|, 1e-6), the largest deviation relative
to the tensor's scale.
"""
import collections
import copy
import json
import re

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from . import optim, ort


def roles(model_proto):
    """The amp_opt.* metadata of an exported step, JSON decoded."""
    found = {}
    for entry in model_proto.metadata_props:
        if entry.key.startswith("amp_opt."):
            value = entry.value
            try:
                value = json.loads(value)
            except ValueError:
                pass
            found[entry.key[len("amp_opt."):]] = value
    return found


def carried_outputs(meta):
    """{updated output: input it feeds} of an exported step's metadata
    (roles()): parameters, their optimizer state, buffers and the step
    count."""
    carried = {}
    for param in meta["parameters"]:
        carried[param["updated"]] = param["name"]
        for key, name in param["state"].items():
            carried[param["state_updated"][key]] = name
    for buf in meta["buffers"]:
        carried[buf["updated"]] = buf["name"]
    opt = meta["optimizer"]
    if opt.get("step"):
        carried[opt["step_updated"]] = opt["step"]
    return carried


def run_exported(path, inputs, targets, steps=2, states=None):
    """Losses of each step and the final state (name -> array) of the
    exported step at `path`, run in ONNX Runtime. The loss scale and
    clean-step count of a step with dynamic loss scaling are state too.
    `states`, a list, receives the state after each step."""
    meta = roles(onnx.load(path))
    data = dict(zip(meta["inputs"], inputs))
    data.update(zip(meta["targets"], targets))
    return run_carried(path, data, carried_outputs(meta), meta["loss"], steps,
                       states)


def run_carried(path, data, carried, loss="loss", steps=2, states=None):
    """Runs the step at `path` in ONNX Runtime `steps` times, feeding `data`
    (input name -> array) and each output of `carried` (output name ->
    input name) into its input; the other inputs keep their initializers.
    The state amp-insert-loss-scaling adds (docs/LossScaling.md) is carried
    too, and, as amp-run does, every output `X.updated` of an input `X`
    (FP8 scaling state, docs/FP8.md). Returns the losses and the final
    state; `states`, a list, receives a copy of the state after each
    step."""
    model_proto = onnx.load(path)
    meta = roles(model_proto)
    state = {init.name: numpy_helper.to_array(init)
             for init in model_proto.graph.initializer}
    graph_inputs = [i.name for i in model_proto.graph.input]
    carried = dict(carried)
    scaling = meta.get("loss_scaling") or {}
    for key in ("scale", "count"):
        if scaling.get(f"{key}_updated"):
            carried[scaling[f"{key}_updated"]] = scaling[key]
    for output in model_proto.graph.output:
        stem = output.name[:-len(".updated")]
        if output.name.endswith(".updated") and stem in graph_inputs:
            carried.setdefault(output.name, stem)
    losses = []
    for _ in range(steps):
        feeds = {}
        for name in graph_inputs:
            feeds[name] = data[name] if name in data else state[name]
        outputs = ort.run(path, feeds)
        losses.append(float(outputs[loss]))
        for out, name in carried.items():
            if out in outputs:
                state[name] = outputs[out]
        if states is not None:
            states.append(dict(state))
    return losses, state


def low_precision_after_unscale(model_proto):
    """The unscaled gradients of a converted step (`<grad>.unscaled`,
    docs/LossScaling.md) and the values downstream of them that are FP16 or
    BF16: the optimizer region must stay FP32, so the second list must be
    empty."""
    graph = model_proto.graph
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(graph.value_info) + list(graph.output)}
    users = collections.defaultdict(list)
    for node in graph.node:
        for name in node.input:
            users[name].append(node)
    unscaled = [v for v in types if v.endswith(".unscaled")]
    low = {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}
    seen, bad, work = set(unscaled), [], list(unscaled)
    while work:
        for node in users[work.pop()]:
            for name in node.output:
                if name and name not in seen:
                    seen.add(name)
                    work.append(name)
                    if types.get(name) in low:
                        bad.append(name)
    return unscaled, bad


def copy_model(model):
    """A deep copy of `model`. Tensors a forward hook computes and keeps as
    module attributes (spectral_norm's `weight`) are not graph leaves, which
    copy.deepcopy refuses; they are copied detached (the hook computes them
    again)."""
    memo = {}
    for module in model.modules():
        for value in vars(module).values():
            if isinstance(value, torch.Tensor) and not value.is_leaf:
                memo[id(value)] = value.detach().clone()
    return copy.deepcopy(model, memo)


def run_eager(model, inputs, targets, loss_fn, optimizer, hyper, steps=2):
    """The same as run_exported with the model and torch.optim; the state
    uses the exported step's names."""
    model = copy_model(model)
    model.train()
    cls = optim.TORCH_CLASSES[optimizer]
    opt = cls(model.parameters(), **hyper)
    inputs = [torch.as_tensor(x) for x in inputs]
    targets = [torch.as_tensor(t) for t in targets]
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(*inputs), *targets)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    state = {}
    for name, param in model.named_parameters():
        state[name] = param.detach().numpy()
        for key, value in opt.state.get(param, {}).items():
            if value is None:
                continue
            if key == "step":
                # A tensor (Adam), or an int (RMSprop, torch 1.13).
                state["optimizer.step"] = np.asarray(
                    float(value), np.float32).reshape(1)
            else:
                state[f"{name}.{key}"] = value.detach().numpy()
    for name, buf in model.named_buffers():
        state[name] = buf.detach().numpy()
    return losses, state


def eager_loss(model, state, inputs, targets, loss_fn):
    """The loss of one training-mode forward of `model` with `state` (name
    -> array, the exported step's names) loaded: what a step given that
    state must compute."""
    model = copy_model(model)
    model.train()
    # Copied into the model's own tensors: a tied weight's alias shares
    # them, and load_state_dict would run modules' version checks.
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name in state:
                tensor.copy_(torch.as_tensor(
                    np.asarray(state[name])).reshape(tensor.shape))
        return float(loss_fn(model(*[torch.as_tensor(x) for x in inputs]),
                             *[torch.as_tensor(t) for t in targets]))


def forward_explains(model, state, inputs, targets, loss_fn, loss,
                     tolerance=1e-5, rounding_factor=4.0):
    """Whether `loss` is what one training-mode forward from `state`
    computes (eager_loss): within `tolerance` of eager float32's, or at
    most `rounding_factor` times as far from eager float64's as eager
    float32's is (from a violent state float32 itself is off by more than
    `tolerance`)."""
    forward = eager_loss(model, state, inputs, targets, loss_fn)
    if abs(loss - forward) <= tolerance * abs(forward):
        return True
    exact = eager_loss(copy_model(model).double(), state,
                       _double(inputs), _double(targets), loss_fn)
    return abs(loss - exact) <= rounding_factor * abs(forward - exact)


def relative_error(actual, expected):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return float("inf")
    if actual.size == 0:
        return 0.0
    scale = max(float(np.abs(expected).max()), 1e-6)
    return float(np.abs(actual - expected).max()) / scale


def _double(tensors):
    return tuple(t.double() if t.is_floating_point() else t for t in tensors)


def compare(model, inputs, targets, loss_fn, path, optimizer, hyper,
            steps=2, tolerance=1e-5, rounding_factor=4.0):
    """Checks the exported step at `path` against eager PyTorch over `steps`
    steps: each step's loss ('loss<i>') and every parameter, buffer and
    optimizer-state tensor at the end.

    A tensor passes when its error against eager PyTorch (float32) is below
    `tolerance`. Otherwise the same steps run eagerly in float64: when the
    exported graph is within `rounding_factor` times as close to float64 as
    eager float32 itself is, float32 rounding explains the difference (Adam
    divides near-zero gradients by their own magnitude; sums that cancel
    lose digits). Returns {name: (error, float32 rounding, verdict, ratio)}
    with verdict 'pass', 'rounding' or 'FAIL' and ratio the exported
    graph's distance to float64 over eager float32's (None on a pass).
    """
    np_inputs = [x.numpy() for x in inputs]
    np_targets = [t.numpy() for t in targets]
    states = []
    onnx_losses, onnx_state = run_exported(path, np_inputs, np_targets,
                                           steps, states)
    return compare_state(model, inputs, targets, loss_fn, optimizer, hyper,
                         onnx_losses, onnx_state, tolerance, rounding_factor,
                         states)


def compare_state(model, inputs, targets, loss_fn, optimizer, hyper, losses,
                  state, tolerance=1e-5, rounding_factor=4.0, states=None):
    """compare() of the `losses` (one per step) and final `state` (name ->
    array) that some run of the exported step computed. With `states` (the
    state after each step), a later step's loss that float64 does not
    explain still passes as 'rounding' when eager's forward from the run's
    own previous state explains it (forward_explains, with `tolerance` and
    `rounding_factor`): one scalar amplifies the earlier steps' rounding
    (BatchNorm over a batch of 2, a reflected sampling grid), while the
    state itself is judged tensor by tensor."""
    hyper = dict(optim.resolve(optimizer, **hyper))
    steps = len(losses)
    eager_losses, eager_state = run_eager(model, inputs, targets, loss_fn,
                                          optimizer, hyper, steps)
    state = dict(state)
    state.update({f"loss{i}": np.float32(v) for i, v in enumerate(losses)})
    eager_state.update({f"loss{i}": np.float32(v)
                        for i, v in enumerate(eager_losses)})
    exact = None
    results = {}
    for name, expected in eager_state.items():
        actual = state.get(name)
        error = (float("inf") if actual is None
                 else relative_error(actual, expected))
        if error <= tolerance:
            results[name] = (error, None, "pass", None)
            continue
        if exact is None:
            losses64, exact = run_eager(copy_model(model).double(),
                                        _double(inputs), _double(targets),
                                        loss_fn, optimizer, hyper, steps)
            exact.update({f"loss{i}": v for i, v in enumerate(losses64)})
        rounding = relative_error(expected, exact[name])
        ratio = (float("inf") if actual is None else
                 relative_error(actual, exact[name]) / max(rounding, 1e-30))
        verdict = "rounding" if ratio <= rounding_factor else "FAIL"
        later = re.fullmatch(r"loss([1-9][0-9]*)", name)
        if verdict == "FAIL" and states and later and actual is not None:
            step = int(later.group(1))
            if forward_explains(model, states[step - 1], inputs, targets,
                                loss_fn, float(actual), tolerance,
                                rounding_factor):
                verdict = "rounding"
        results[name] = (error, rounding, verdict, ratio)
    return results
