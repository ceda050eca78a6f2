"""Export a whole PyTorch training step (forward, loss, backward and the
optimizer update) to one ONNX graph.

    python3 -m amp_opt.export --zoo mlp --optimizer adam -o mlp_adam.onnx

The step is traced into aten ops with functorch.make_fx. Aten ops that
torch.onnx cannot export are replaced by decompositions (ours first, then
torch's aten-level ones) until every op exports; an op with neither is an
error that names it. Cross-entropy with label smoothing is traced with a
mask multiply where torch takes masked_select, and torch.stft becomes
ONNX's STFT (decompositions.traced_replacements). The graph's roles (loss, parameters, gradients, updated
values, optimizer state) are recorded in metadata_props: see
docs/TrainingStepFormat.md.
"""
import argparse
import contextlib
import functools
import io
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np
import onnx
import torch
from functorch import functionalize, make_fx
from onnx import numpy_helper
from torch.onnx import _type_utils
from torch.onnx._internal import registration

from . import decompositions, optim

FORMAT = "amp_opt.training_step.v1"
#: The metadata_props keys this exporter writes (docs/TrainingStepFormat.md).
METADATA_KEYS = ("amp_opt.format", "amp_opt.loss", "amp_opt.loss_seed",
                 "amp_opt.inputs", "amp_opt.targets", "amp_opt.parameters",
                 "amp_opt.buffers", "amp_opt.optimizer")
#: The input holding the backward seed, d(loss)/d(loss) = 1.
SEED = "loss.seed"
#: Attempts at finding decompositions before giving up.
MAX_DECOMPOSITION_ROUNDS = 20
#: Naming conventions of other exporters, for plain steps
#: (export_training_step(plain=...)): the prefix of parameter inputs, and the
#: name of the output that updates input X.
PLAIN_CONVENTIONS = {
    "new_param": ("param.", "new_{}"),
    "suffix_new": ("", "{}_new"),
    "next": ("state.", "next_{}"),
    "updated_prefix": ("", "updated_{}"),
    "dot_updated": ("", "{}.updated"),
    "suffix_out": ("", "{}_out"),
    "dot_out": ("", "{}.out"),
    "prime": ("", "{}'"),
}
#: Optimizer state names of plain steps: `<role>.<param>`.
PLAIN_STATE_ROLES = {"momentum_buffer": "momentum", "exp_avg": "adam_m",
                     "exp_avg_sq": "adam_v", "max_exp_avg_sq": "adam_vmax",
                     "square_avg": "rms_sq", "grad_avg": "rms_avg",
                     "sum": "adagrad_sum"}


class ExportError(RuntimeError):
    """The model cannot be exported; the message says why and what to do."""


def _parameter_aliases(model):
    """(name, tensor, [every name it has]) per distinct parameter, in
    named_parameters() order; a tied weight has several names."""
    aliases = {}
    for module_name, module in model.named_modules():
        for name, param in module._parameters.items():
            if param is not None:
                full = f"{module_name}.{name}" if module_name else name
                aliases.setdefault(id(param), []).append(full)
    return [(name, param, aliases[id(param)])
            for name, param in model.named_parameters()]


@contextlib.contextmanager
def _bound(model, bindings):
    """Runs the block with the model's parameters and buffers replaced by
    `bindings` (name -> tensor), as torch.func.functional_call does. Unlike
    torch 1.13's functional_call it also refreshes the weight list that
    nn.RNNBase (LSTM, GRU) computes with, which would otherwise read the
    original parameters as constants."""
    saved = []
    touched = set()
    try:
        for name, tensor in bindings.items():
            path, _, attr = name.rpartition(".")
            module = model.get_submodule(path)
            slots = (module._parameters if attr in module._parameters
                     else module._buffers)
            saved.append((slots, attr, slots[attr]))
            slots[attr] = tensor
            touched.add(module)
        for module in touched:
            if isinstance(module, torch.nn.RNNBase):
                saved.append((module.__dict__, "_flat_weights",
                              module._flat_weights))
                module._flat_weights = [getattr(module, n)
                                        for n in module._flat_weights_names]
        yield
    finally:
        for slots, attr, old in reversed(saved):
            slots[attr] = old


def _captured_state(graph_module, model):
    """Names of parameters and buffers whose storage the traced graph holds
    as a constant: the model read them around the bindings."""
    storages = {}
    for name, tensor in list(model.named_parameters()) + list(
            model.named_buffers()):
        storages.setdefault(tensor.data_ptr(), name)
    constants = [value for value in vars(graph_module).values()
                 if isinstance(value, torch.Tensor)]
    constants += [value for _, value in graph_module.named_parameters()]
    constants += [value for _, value in graph_module.named_buffers()]
    return sorted({storages[value.data_ptr()] for value in constants
                   if value.numel() > 0 and value.data_ptr() in storages})


def _onnx_exportable(op, opset):
    schema = getattr(op, "_schema", None)
    return (schema is None or decompositions.has_symbolic(schema.name, opset)
            or registration.registry.is_registered_op(schema.name, opset))


def _unexportable_ops(graph_module, opset):
    return sorted({node.target for node in graph_module.graph.nodes
                   if node.op == "call_function"
                   and not _onnx_exportable(node.target, opset)}, key=str)


#: Ops the first trace must keep for functionalize: lift_fresh marks a
#: tensor the step creates (decomposed, functionalize meets an alias of
#: a constant and fails).
_FOR_FUNCTIONALIZE = (torch.ops.aten.lift_fresh.default,)


def _has_native_decomposition(op):
    """Whether make_fx decomposes `op` with its own CompositeImplicit
    kernel when no table entry overrides it (silu_backward: Sigmoid, where
    torch._decomp's would write 1 / (1 + exp(-x)))."""
    return torch._C._dispatch_has_kernel_for_dispatch_key(
        op.name(), torch._C.DispatchKey.CompositeImplicitAutograd)


@functools.lru_cache(maxsize=None)
def _unexportable_ops_with_decompositions(opset):
    """The functional aten ops that reach a graph, do not export at `opset`
    and have a decomposition, with it: the trace decomposes them from the
    start, since each round of _trace that finds ops missing traces the
    whole step again. A step's graph is the same as with the rounds
    alone."""
    found = {op: decompositions.find(op, opset)
             for op in decompositions.decomposable_ops()
             if isinstance(op, torch._ops.OpOverload)
             and not op._schema.is_mutable
             and op not in _FOR_FUNCTIONALIZE
             and not _has_native_decomposition(op)
             and not _onnx_exportable(op, opset)}
    return {op: fn for op, fn in found.items() if fn is not None}


def _recorded(op, decomposition, used):
    def decompose(*args, **kwargs):
        used.add(op)
        return decomposition(*args, **kwargs)
    return decompose


def _trace(step, args, opset):
    """make_fx of `step`, with decompositions for every aten op that does
    not export at `opset`. Returns the GraphModule and the ops that needed
    a decomposition (besides decompositions.always)."""
    table = decompositions.always(opset)
    used = set()
    for op, decomposition in _unexportable_ops_with_decompositions(
            opset).items():
        if op not in table:
            table[op] = _recorded(op, decomposition, used)
    discovered = []
    for _ in range(MAX_DECOMPOSITION_ROUNDS):
        graph_module = make_fx(step, decomposition_table=table)(*args)
        # In-place updates (BatchNorm's running statistics) become values.
        graph_module = make_fx(functionalize(graph_module),
                               decomposition_table=table)(*args)
        missing = _unexportable_ops(graph_module, opset)
        if not missing:
            return graph_module, sorted(used.union(discovered), key=str)
        stuck = [op for op in missing
                 if op in table or decompositions.find(op, opset) is None]
        if stuck:
            listed = ", ".join(f"'{op}'" for op in stuck)
            raise ExportError(
                f"the aten op(s) {listed} have no ONNX export at opset "
                f"{opset} and no decomposition; rewrite the model code that "
                f"calls them, or add a decomposition to "
                f"amp_opt/decompositions.py")
        for op in missing:
            table[op] = decompositions.find(op, opset)
            discovered.append(op)
    raise ExportError("decompositions did not converge")


@contextlib.contextmanager
def _default_dtype(params):
    """torch.onnx casts both operands of a division whose types its graph
    lost (sums, a loss's mean) to the default dtype: a float64 model's
    loss became float32. The block runs with float64 as the default when
    the parameters are float64."""
    saved = torch.get_default_dtype()
    if all(param.dtype == torch.float64 for _, param, _ in params):
        torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def _user_frame(error):
    """' at FILE:LINE in FUNCTION' of the innermost frame of `error`'s
    traceback outside torch and amp_opt, or ''."""
    import traceback
    ours = os.path.dirname(os.path.abspath(__file__))
    theirs = os.path.dirname(os.path.abspath(torch.__file__))
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith("<")  # generated code
              and not os.path.abspath(frame.filename).startswith(
                  (ours, theirs))]
    if not frames:
        return ""
    frame = frames[-1]
    return f" at {frame.filename}:{frame.lineno} in {frame.name}"


def _check_tensors(what, values):
    if not isinstance(values, tuple):
        raise ExportError(f"{what} must be a tuple of tensors")
    for value in values:
        if not isinstance(value, torch.Tensor):
            raise ExportError(f"{what} must hold tensors, not "
                              f"{type(value).__name__}")


def export_training_step(model, example_inputs, example_targets, loss_fn,
                         path, optimizer="sgd", lr=None, opset=17,
                         plain=None, loss_name="loss", output_logits=False,
                         clip_grad_norm=None, **optimizer_kwargs):
    """Writes one ONNX graph computing forward, loss, backward and the
    optimizer update of `model`; returns a dict of what it wrote.

    The loss is loss_fn(model(*example_inputs), *example_targets). Graph
    inputs: the parameters, buffers, frozen parameters (requires_grad
    False; nothing updates them), optimizer state (with their current
    values as initializers), then the example inputs and targets (without).
    Graph outputs: the loss, then the updated parameters, buffers and state.
    The optimizers follow torch.optim's rules and defaults.

    `plain` (a key of PLAIN_CONVENTIONS) writes the step as other exporters
    do: autograd's implicit seed instead of a `loss.seed` input, no
    metadata, and that convention's names. `loss_name` names the loss
    output, `output_logits` adds the model's output as output `logits`, and
    `clip_grad_norm` clips the gradients by their global norm first.
    """
    _check_tensors("example_inputs", example_inputs)
    _check_tensors("example_targets", example_targets)
    if opset < 13 or opset > 17:
        raise ExportError(f"opset {opset} is not supported; use 13 to 17")
    try:
        hyper = optim.resolve(optimizer, lr, **optimizer_kwargs)
    except optim.OptimizerError as error:
        raise ExportError(str(error)) from None
    directory = os.path.dirname(os.path.abspath(path))
    if not os.access(directory, os.W_OK):
        raise ExportError(f"cannot write '{path}': the folder does not exist "
                          f"or is not writable")

    all_params = _parameter_aliases(model)
    # Frozen parameters (requires_grad=False, a fine-tuned model's
    # backbone) are inputs of the step that nothing updates, as
    # torch.optim skips a parameter without a gradient.
    params = [entry for entry in all_params if entry[1].requires_grad]
    frozen = [entry for entry in all_params if not entry[1].requires_grad]
    if not params:
        raise ExportError(
            "the model has no parameters to train" +
            (f" (all {len(frozen)} have requires_grad=False)" if frozen
             else ""))
    if plain is not None and plain not in PLAIN_CONVENTIONS:
        raise ExportError(f"unknown naming convention '{plain}'; expected "
                          f"one of {', '.join(PLAIN_CONVENTIONS)}")
    buffers = [(name, buf) for name, buf in model.named_buffers()]
    state_keys = optim.state_names(optimizer, hyper)
    with_step = optim.uses_step(optimizer, hyper)
    naming = _Naming(plain)

    # Flat graph inputs and their names.
    names, values = [], []
    for name, param, _ in params:
        names.append(naming.param(name))
        values.append(param.detach().clone())
    for name, buf in buffers:
        names.append(naming.buffer(name))
        values.append(buf.detach().clone())
    for name, param, _ in frozen:
        names.append(naming.param(name))
        values.append(param.detach().clone())
    for name, param, _ in params:
        for key in state_keys:
            names.append(naming.state(name, key))
            values.append(torch.full_like(
                param, optim.initial_state(optimizer, hyper, key),
                memory_format=torch.contiguous_format).detach())
    if with_step:
        names.append(naming.step)
        values.append(torch.zeros(1))
    if plain is None:
        # The backward seed d(loss)/d(loss) = 1 is an input, so that loss
        # scaling finds where the backward starts.
        names.append(SEED)
        values.append(torch.ones(()))
    num_state_inputs = len(names)
    input_names = [f"input{i}" for i in range(len(example_inputs))]
    target_names = [f"target{i}" for i in range(len(example_targets))]
    names += input_names + target_names
    values += [t.detach() for t in example_inputs]
    values += [t.detach() for t in example_targets]

    num_params, num_buffers, num_frozen = len(params), len(buffers), len(frozen)
    was_training = model.training
    model.train()

    def step(*flat):
        flat = list(flat)
        ps = [p.detach().requires_grad_() for p in flat[:num_params]]
        pos = num_params
        bufs = [b.clone() for b in flat[pos:pos + num_buffers]]
        pos += num_buffers
        constants = flat[pos:pos + num_frozen]
        pos += num_frozen
        states = []
        for _ in params:
            states.append(dict(zip(state_keys, flat[pos:pos + len(state_keys)])))
            pos += len(state_keys)
        count = None
        if with_step:
            count = flat[pos]
            pos += 1
        seed = None
        if plain is None:
            seed = flat[pos]
            pos += 1
        inputs = flat[pos:pos + len(example_inputs)]
        targets = flat[pos + len(example_inputs):]
        bindings = {}
        for (_, _, aliases), p in zip(params + frozen, ps + constants):
            for alias in aliases:
                bindings[alias] = p
        for (name, _), b in zip(buffers, bufs):
            bindings[name] = b
        with _bound(model, bindings):
            output = model(*inputs)
        loss = loss_fn(output, *targets)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise ExportError("loss_fn must return a tensor with one element")
        grads = torch.autograd.grad(
            loss, ps, grad_outputs=None if seed is None else seed.reshape(
                loss.shape), allow_unused=True)
        grads = [None if g is None else g.detach() for g in grads]
        # `<param>.grad` is the loss's gradient, linear in the seed: what
        # loss scaling unscales before the clipping (as GradScaler's
        # unscale_ before clip_grad_norm_).
        loss_grads = grads
        if clip_grad_norm is not None:
            grads = _clip_by_global_norm(grads, clip_grad_norm)
        new_params, new_states, new_step = optim.update(
            optimizer, hyper, [p.detach() for p in ps], grads, states, count)
        outputs = [loss.detach().reshape(())]
        if output_logits:
            outputs.append(output.detach())
        if plain is None:
            outputs += [g if g is not None else torch.zeros_like(p)
                        for g, p in zip(loss_grads, ps)]
        # torch.onnx makes 0-d results 1-d; the reshape keeps each updated
        # value the shape of its input (num_batches_tracked).
        outputs += new_params + [b.reshape(b.shape) for b in bufs]
        for state in new_states:
            outputs += [state[key] for key in state_keys]
        if with_step:
            outputs.append(new_step)
        return tuple(outputs)

    try:
        with warnings.catch_warnings(), \
                decompositions.traced_replacements():
            warnings.simplefilter("ignore")
            graph_module, decomposed = _trace(step, values, opset)
    except NotImplementedError as error:
        # A decomposition met a case it does not cover.
        raise ExportError(f"the model uses {error}, which the exporter "
                          f"does not support yet") from None
    except RuntimeError as error:
        if "not implemented for 'Half'" in str(error):
            raise ExportError(
                f"torch {torch.__version__} cannot run this float16 model on "
                f"the CPU, where the step is traced ({error}): export it in "
                f"float32 and convert it with amp-opt "
                f"--amp-pipeline=\"precision=fp16\"") from None
        if "value out of a tracing tensor" not in str(error):
            raise
        raise ExportError(
            f"the model reads a tensor's value as a Python number "
            f"(float(t), t.item(), `if t > 0:`){_user_frame(error)}: the "
            f"traced step would keep the example's value; compute with "
            f"tensor ops instead") from None
    finally:
        model.train(was_training)
    captured = _captured_state(graph_module, model)
    if captured:
        raise ExportError(
            f"the model reads {', '.join(captured)} without going through "
            f"its module attributes, so the step would train a constant; "
            f"this model structure is not supported")

    grad_names = [f"{name}.grad" for name, _, _ in params]
    updated = naming.updated
    output_names = [loss_name] + (["logits"] if output_logits else [])
    if plain is None:
        output_names += grad_names
    output_names += [updated(naming.param(name)) for name, _, _ in params]
    output_names += [updated(naming.buffer(name)) for name, _ in buffers]
    for name, _, _ in params:
        output_names += [updated(naming.state(name, key))
                         for key in state_keys]
    if with_step:
        output_names.append(updated(naming.step))

    try:
        with warnings.catch_warnings(), decompositions.onnx_symbolics(opset), \
                _default_dtype(params):
            warnings.simplefilter("ignore")
            model_proto = _to_onnx(graph_module, values, names, output_names,
                                   opset)
    except ExportError:
        raise
    except Exception as error:  # torch.onnx fails in many ways.
        raise ExportError(f"torch.onnx.export failed: "
                          f"{type(error).__name__}: {error}") from None
    _finish(model_proto, names[:num_state_inputs], values[:num_state_inputs],
            grad_names)
    if plain is None:
        # Our format records the roles (docs/TrainingStepFormat.md).
        roles = {
            "amp_opt.format": FORMAT,
            "amp_opt.loss": loss_name,
            "amp_opt.loss_seed": SEED,
            "amp_opt.inputs": input_names,
            "amp_opt.targets": target_names,
            "amp_opt.parameters": [
                {"name": name, "aliases": aliases,
                 "gradient": f"{name}.grad", "updated": updated(name),
                 "state": {key: f"{name}.{key}" for key in state_keys},
                 "state_updated": {key: updated(f"{name}.{key}")
                                   for key in state_keys}}
                for name, _, aliases in params],
            "amp_opt.buffers": [{"name": name, "updated": updated(name)}
                                for name, _ in buffers],
            "amp_opt.optimizer": dict(
                type=optimizer,
                step=("optimizer.step" if with_step else None),
                step_updated=(updated("optimizer.step") if with_step
                              else None),
                **hyper),
        }
        for key, value in roles.items():
            entry = model_proto.metadata_props.add()
            entry.key = key
            entry.value = (value if isinstance(value, str)
                           else json.dumps(value))
        model_proto.producer_name = "amp_opt.export"
    data = _check_and_save(model_proto, path)
    return {"path": path, "external_data": data,
            "nodes": len(model_proto.graph.node),
            "parameters": len(params), "loss": loss_name,
            "inputs": names[:num_state_inputs],
            "outputs": [o.name for o in model_proto.graph.output],
            "decomposed": [str(op) for op in decomposed]}


def _onnx_export(module, args, input_names, output_names, opset):
    buffer = io.BytesIO()
    torch.onnx.export(module, tuple(args), buffer, input_names=input_names,
                      output_names=output_names, opset_version=opset,
                      do_constant_folding=True)
    return onnx.load_from_string(buffer.getvalue())


def _to_onnx(graph_module, values, input_names, output_names, opset):
    """torch.onnx.export of the traced step, in segments of about
    SEGMENT_OPS aten ops when it has more: torch 1.13's exporter does work
    proportional to the graph converted so far for every node it converts
    (pytorch/pytorch#121422), so one export of 5,000 ops takes a minute."""
    ops = [n for n in graph_module.graph.nodes
           if n.op not in ("placeholder", "get_attr", "output")]
    cuts = _segment_cuts(ops)
    if len(cuts) == 1:
        return _onnx_export(graph_module, values, input_names, output_names,
                            opset)
    return _export_segments(graph_module, ops, cuts, values, input_names,
                            output_names, opset)


#: Aten ops per torch.onnx.export call (see _to_onnx): small enough that
#: the exporter's quadratic term stays small, large enough that its fixed
#: cost per call does not dominate.
SEGMENT_OPS = 500


def _crosses(node):
    """Whether segments may pass `node`'s value: a tensor ONNX has a type
    for (torch.onnx takes no list, such as a split's, as an input)."""
    meta = node.meta.get("tensor_meta")
    return (meta is not None and hasattr(meta, "dtype")
            and not meta.dtype.is_complex)


def _segment_cuts(ops):
    """End indices into `ops` of segments of at least SEGMENT_OPS ops, cut
    only where every value that later ops read can cross (_crosses)."""
    computed = set(ops)
    last_read = {}
    for i, op in enumerate(ops):
        for source in op.all_input_nodes:
            if source in computed:
                last_read[source] = i
    cuts, live, start = [], {}, 0
    for i, op in enumerate(ops):
        if last_read.get(op, i) > i:
            live[op] = last_read[op]
        for source in op.all_input_nodes:
            if live.get(source) == i:
                del live[source]
        if (i + 1 - start >= SEGMENT_OPS and i + 1 < len(ops)
                and all(_crosses(v) for v in live)):
            cuts.append(i + 1)
            start = i + 1
    cuts.append(len(ops))
    return cuts


def _export_segments(graph_module, ops, cuts, values, input_names,
                     output_names, opset):
    """Exports ops[cuts[k-1]:cuts[k]] one by one and joins the graphs: a
    value crossing segments is an output of one and an input of the next
    under one name; every other name of segment k gets the prefix `s<k>/`."""
    placeholders = [n for n in graph_module.graph.nodes
                    if n.op == "placeholder"]
    names = dict(zip(placeholders, input_names))
    computed = dict(zip(placeholders, values))
    returned = next(n for n in graph_module.graph.nodes
                    if n.op == "output").args[0]
    finals = []  # (node, name) of outputs that need an Identity
    for node, name in zip(returned, output_names):
        if node in names:  # a step input, or a value returned twice
            finals.append((node, name))
        else:
            names[node] = name
    segments = [ops[begin:end] for begin, end in zip([0] + cuts[:-1], cuts)]
    segment_of = {op: k for k, segment in enumerate(segments)
                  for op in segment}
    taken = set(input_names) | set(output_names)
    crossing = set()  # the names this function gives
    for op in ops:
        if op not in names and any(segment_of.get(user) != segment_of[op]
                                   for user in op.users):
            name = op.name
            while name in taken:
                name += "_"
            taken.add(name)
            crossing.add(name)
            names[op] = name

    graph = onnx.GraphProto(name="main_graph")
    inputs, produced, domains, model = {}, {}, {}, None
    for k, segment in enumerate(segments):
        module, sources, results = _segment_module(graph_module, segment,
                                                   segment_of, k)
        seg_inputs = [names[n] for n in sources]
        seg_outputs = [names[n] for n in results]
        args = [computed[n] for n in sources]
        part = _onnx_export(module, args, seg_inputs, seg_outputs, opset)
        if k + 1 < len(segments):  # the next segments' example inputs
            with torch.no_grad():
                computed.update(zip(results, module(*args)))
        _name_outputs(part.graph, seg_outputs, k)
        kept = set(seg_inputs) | set(seg_outputs)
        for node in part.graph.node:
            node.name = f"s{k}/{node.name}"
        _rename_values(part.graph, lambda name, k=k, kept=kept: (
            name if not name or name in kept else f"s{k}/{name}"))
        if model is None:
            model = part
        for value in part.graph.input:
            inputs.setdefault(value.name, value)
        for value in part.graph.output:
            produced[value.name] = value
        for entry in part.opset_import:
            domains[entry.domain] = max(entry.version,
                                        domains.get(entry.domain, 0))
        graph.node.extend(part.graph.node)
        graph.initializer.extend(part.graph.initializer)
        graph.value_info.extend(part.graph.value_info)
    for node, name in finals:
        graph.node.append(onnx.helper.make_node(
            "Identity", [names[node]], [name], name=f"Identity_{name}"))
        if node in placeholders and names[node] not in inputs:
            inputs[names[node]] = _value_info(names[node], computed[node])
    graph.input.extend(inputs[name] for name in input_names if name in inputs)
    for node, name in zip(returned, output_names):
        info = onnx.ValueInfoProto()
        info.CopyFrom(produced[names[node]] if names[node] in produced
                      else inputs[names[node]])
        info.name = name
        graph.output.append(info)
    _remove_crossing_aliases(graph, crossing)
    model.graph.CopyFrom(graph)
    del model.opset_import[:]
    model.opset_import.extend(onnx.helper.make_opsetid(domain, version)
                              for domain, version in domains.items())
    return model


def _name_outputs(graph, names, k):
    """Gives the outputs of segment k's graph their `names`: torch.onnx
    keeps an output's own name where constant folding made it an
    initializer."""
    constants = {t.name for t in graph.initializer}
    renamed = {}
    for output, name in zip(graph.output, names):
        if output.name == name:
            continue
        if output.name in constants and output.name not in renamed:
            renamed[output.name] = name
        else:
            raise ExportError(f"segment {k} of the step exported output "
                              f"'{output.name}' where '{name}' was expected")
    if renamed:
        _rename_values(graph, lambda name: renamed.get(name, name))


def _value_info(name, tensor):
    elem_type = _type_utils.JitScalarType.from_dtype(tensor.dtype).onnx_type()
    return onnx.helper.make_tensor_value_info(name, int(elem_type),
                                              list(tensor.shape))


def _segment_module(graph_module, segment, segment_of, k):
    """A GraphModule of the ops `segment` (segment k): the values it reads
    from the step's inputs and earlier segments as placeholders, in first
    use order; the values later segments or the step's outputs read as its
    outputs. Returns it, the source nodes and the result nodes."""
    inside = set(segment)
    sources = []
    for op in segment:
        for source in op.all_input_nodes:
            if (source not in inside and source.op != "get_attr"
                    and source not in sources):
                sources.append(source)
    graph = torch.fx.Graph()
    copies = {source: graph.placeholder(source.name) for source in sources}

    def copy_of(node):
        if node not in copies:  # a constant: each segment has its own
            copies[node] = graph.node_copy(node)
        return copies[node]

    for op in segment:
        copies[op] = graph.node_copy(op, copy_of)
    results = [op for op in segment
               if any(segment_of.get(user) != k for user in op.users)]
    graph.output(tuple(copies[op] for op in results))
    return torch.fx.GraphModule(graph_module, graph), sources, results


def _rename_values(graph, renamed):
    """Renames every value of `graph` and its subgraphs by `renamed`."""
    for node in graph.node:
        node.input[:] = [renamed(n) for n in node.input]
        node.output[:] = [renamed(n) for n in node.output]
        for attribute in node.attribute:
            for body in list(attribute.graphs) + (
                    [attribute.g] if attribute.HasField("g") else []):
                _rename_values(body, renamed)
    for value in list(graph.input) + list(graph.output) + list(
            graph.value_info):
        value.name = renamed(value.name)
    for tensor in graph.initializer:
        tensor.name = renamed(tensor.name)


def _remove_crossing_aliases(graph, crossing):
    """Drops the Identity nodes that torch.onnx writes where a segment
    returns one of its inputs (a parameter's detach, a gradient's): a
    crossing value copied to another name takes that name, or readers of a
    crossing copy read its source."""
    alias = {}
    for node in graph.node:
        if node.op_type != "Identity":
            continue
        source, copy = node.input[0], node.output[0]
        if copy in crossing:
            alias[copy] = source
        elif source in crossing and source not in alias:
            alias[source] = copy
    if not alias:
        return

    def final(name):
        while name in alias:
            name = alias[name]
        return name

    kept = [n for n in graph.node if not (
        n.op_type == "Identity" and final(n.input[0]) == final(n.output[0]))]
    del graph.node[:]
    graph.node.extend(kept)
    infos = [v for v in graph.value_info if v.name not in alias]
    del graph.value_info[:]
    graph.value_info.extend(infos)
    _rename_values(graph, final)


class _Naming:
    """Input and output names of a step: ours (docs/TrainingStepFormat.md),
    or a plain convention of PLAIN_CONVENTIONS."""

    def __init__(self, plain):
        self.plain = plain
        prefix, template = PLAIN_CONVENTIONS.get(plain, ("", "{}.updated"))
        self.prefix, self.template = prefix, template
        self.step = "optimizer.step" if plain is None else "step"

    def param(self, name):
        return self.prefix + name

    def buffer(self, name):
        return name if self.plain is None else "buffer." + name

    def state(self, name, key):
        if self.plain is None:
            return f"{name}.{key}"
        return f"{PLAIN_STATE_ROLES[key]}.{name}"

    def updated(self, name):
        return self.template.format(name)


def _clip_by_global_norm(grads, max_norm):
    """torch.nn.utils.clip_grad_norm_'s rule, without mutation."""
    present = [g for g in grads if g is not None]
    total = torch.sqrt(sum((g * g).sum() for g in present))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    return [None if g is None else g * coef for g in grads]


def _initializer(tensor, name):
    """`tensor` as a TensorProto; bfloat16 (which numpy lacks) by its bits."""
    if tensor.dtype != torch.bfloat16:
        return numpy_helper.from_array(tensor.numpy(), name)
    proto = onnx.TensorProto(name=name, dims=tensor.shape,
                             data_type=onnx.TensorProto.BFLOAT16)
    proto.raw_data = tensor.contiguous().view(torch.int16).numpy().tobytes()
    return proto


def _finish(model_proto, state_names, state_values, grad_names):
    """Gives the parameters, buffers and optimizer state their current values
    as initializers, and drops the gradient outputs (the values keep their
    names inside the graph)."""
    graph = model_proto.graph
    inputs = {i.name for i in graph.input}
    existing = {init.name for init in graph.initializer}
    for name, value in zip(state_names, state_values):
        if name not in inputs:
            # torch.onnx drops inputs that no node reads.
            continue
        if name in existing:
            raise ExportError(f"initializer '{name}' is defined twice")
        graph.initializer.append(_initializer(value.detach(), name))
    # A gradient that is also another output, or a graph input, gets an
    # Identity from torch.onnx; either way its name stays defined.
    grads = set(grad_names)
    kept = [o for o in graph.output if o.name not in grads]
    del graph.output[:]
    graph.output.extend(kept)
    _remove_dead_nodes(graph)
    _write_splats_by_shape(graph)


#: Constants of at least this many elements, all equal, are written as
#: ConstantOfShape (see _write_splats_by_shape).
SPLAT_ELEMENTS = 1024


def _write_splats_by_shape(graph):
    """Writes each Constant of SPLAT_ELEMENTS or more equal elements as
    ConstantOfShape of a constant shape. torch.onnx's constant folding
    stores zeros_like and full as whole tensors: a language model's
    cross-entropy and embedding gradients scatter into zeros of [tokens,
    vocabulary] and [vocabulary, hidden] (257 MB of the large zoo GPT's
    1.25 GB), a CNN's MaxPool gradients into zeros of each pooled input
    (398 MB of the large CNN's 492 MB)."""
    rewritten = []
    for node in graph.node:
        splat = _splat_of(node)
        if splat is None:
            rewritten.append(node)
            continue
        shape, element = splat
        shape_name = f"{node.output[0]}.shape"
        rewritten.append(onnx.helper.make_node(
            "Constant", [], [shape_name], name=f"{node.name}.shape",
            value=numpy_helper.from_array(np.array(shape, dtype=np.int64),
                                          shape_name)))
        rewritten.append(onnx.helper.make_node(
            "ConstantOfShape", [shape_name], [node.output[0]], name=node.name,
            value=element))
    del graph.node[:]
    graph.node.extend(rewritten)


def _splat_of(node):
    """(shape, its one element as a tensor) of a default-domain Constant of
    SPLAT_ELEMENTS or more elements of the same bits (-0.0 is not 0.0, a
    NaN is its own payload); else None."""
    value = next((a.t for a in node.attribute if a.name == "value"), None)
    if (node.op_type != "Constant" or node.domain not in ("", "ai.onnx")
            or value is None):
        return None
    array = numpy_helper.to_array(value)
    if array.size < SPLAT_ELEMENTS or array.dtype == object:
        return None
    flat = np.ascontiguousarray(array.reshape(-1))
    elements = flat.view(np.uint8).reshape(flat.size, -1)
    if not (elements == elements[0]).all():
        return None
    return array.shape, numpy_helper.from_array(flat[:1].copy(), value.name)


def _remove_dead_nodes(graph):
    """Removes nodes whose outputs nothing reads (the zeros of unused
    parameters' gradients)."""
    while True:
        used = {o.name for o in graph.output}
        for node in graph.node:
            used.update(node.input)
        keep = [n for n in graph.node if any(o in used for o in n.output)]
        if len(keep) == len(graph.node):
            return
        del graph.node[:]
        graph.node.extend(keep)


#: The largest model written as one file (onnx.checker's limit, under
#: protobuf's 2 GiB); a larger one keeps its initializers in ONNX external
#: data, `<file>.data` beside the file.
PROTOBUF_LIMIT = onnx.checker.MAXIMUM_PROTOBUF


def _check_and_save(model_proto, path):
    """Checks `model_proto` and writes it to `path`, with its initializers
    in `<path>.data` when it is over PROTOBUF_LIMIT: each file is written in
    a temporary folder beside `path` and renamed into place, the data
    first. Returns the data file's path, or None."""
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    external = model_proto.ByteSize() > PROTOBUF_LIMIT
    if not external:
        onnx.checker.check_model(model_proto)
    folder = tempfile.mkdtemp(dir=directory, prefix=".amp_opt_export.")
    try:
        staged = os.path.join(folder, name)
        names = [name]
        if external:
            names.insert(0, name + ".data")
            try:
                onnx.save_model(model_proto, staged,
                                save_as_external_data=True,
                                location=names[0])
            except ValueError as error:  # protobuf's limit
                raise ExportError(
                    f"the graph without its initializers is still over "
                    f"2 GB ({error}): its constants are too large") from None
            onnx.checker.check_model(staged)
        else:
            onnx.save_model(model_proto, staged)
        # mkdtemp makes the folder private; give the files the usual
        # permissions.
        umask = os.umask(0)
        os.umask(umask)
        for each in names:
            os.chmod(os.path.join(folder, each), 0o666 & ~umask)
            os.replace(os.path.join(folder, each),
                       os.path.join(directory, each))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return os.path.join(directory, names[0]) if external else None


def main(argv=None):
    # As `python3 -m amp_opt.export` this file is __main__; the zoo raises
    # the ExportError of the amp_opt.export module.
    from . import export as this_module
    from . import zoo
    parser = argparse.ArgumentParser(
        prog="python3 -m amp_opt.export",
        description="Export a training step of a zoo model to ONNX.")
    parser.add_argument("--zoo", required=True, metavar="NAME",
                        help=f"model: {', '.join(zoo.MODELS)}")
    parser.add_argument("--optimizer", default="sgd",
                        help="sgd, adam, adamw, rmsprop or adagrad "
                             "(default sgd)")
    parser.add_argument("--lr", type=float, default=None,
                        help="learning rate (default: the optimizer's, "
                             "0.01 for sgd)")
    parser.add_argument("--size", choices=["small", "large"],
                        default="small", help="model size (default small)")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("-o", "--output", required=True, metavar="FILE.onnx")
    args = parser.parse_args(argv)
    try:
        info = zoo.export(args.zoo, args.optimizer, args.output,
                          size=args.size, lr=args.lr, opset=args.opset)
    except (this_module.ExportError, zoo.ZooError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    data = (f" (initializers in {info['external_data']})"
            if info["external_data"] else "")
    print(f"wrote {info['path']}{data}: {info['nodes']} nodes, "
          f"{info['parameters']} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
