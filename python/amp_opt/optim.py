"""Functional optimizers that follow torch.optim's update rules and defaults.

Each optimizer updates a list of parameters from their gradients and returns
the new parameters and the new optimizer state, without mutation, so that
the update can be traced into the training-step graph. The state is a dict
of tensors per parameter plus a shared step counter (a float32 tensor of
shape [1]; torch.optim keeps a 0-d one, which torch.onnx would compute
with in float32 where double is needed): every parameter of one exported step advances
together, so one counter is exact.
"""

import math

import torch

# torch.optim's defaults (torch 1.13); SGD's lr has none and must be given.
DEFAULTS = {
    "sgd": dict(lr=None, momentum=0.0, dampening=0.0, weight_decay=0.0,
                nesterov=False, maximize=False),
    "adam": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, maximize=False),
    "adamw": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                  amsgrad=False, maximize=False),
    "rmsprop": dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                    momentum=0.0, centered=False, maximize=False),
    "adagrad": dict(lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                    initial_accumulator_value=0.0, eps=1e-10, maximize=False),
}

#: torch.optim's classes, for the eager references of tests and verify.
TORCH_CLASSES = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam,
                 "adamw": torch.optim.AdamW, "rmsprop": torch.optim.RMSprop,
                 "adagrad": torch.optim.Adagrad}

class OptimizerError(ValueError):
    pass

def resolve(name, lr=None, **kwargs):
    """The optimizer's hyper-parameters: torch.optim's defaults updated with
    the given ones. Raises OptimizerError for an unknown optimizer or
    hyper-parameter."""
    if name not in DEFAULTS:
        raise OptimizerError(
            f"unknown optimizer '{name}'; expected one of "
            f"{', '.join(sorted(DEFAULTS))}")
    hyper = dict(DEFAULTS[name])
    unknown = sorted(set(kwargs) - set(hyper))
    if unknown:
        raise OptimizerError(
            f"unknown {name} hyper-parameter(s) {', '.join(unknown)}; "
            f"expected {', '.join(sorted(hyper))}")
    hyper.update(kwargs)
    if lr is not None:
        hyper["lr"] = lr
    if hyper["lr"] is None:
        raise OptimizerError(f"{name} needs a learning rate (lr=...), as "
                             f"torch.optim.SGD does")
    hyper["lr"] = float(hyper["lr"])
    if "betas" in hyper:
        hyper["betas"] = tuple(float(b) for b in hyper["betas"])
    if name == "sgd" and hyper["nesterov"] and (
            hyper["momentum"] <= 0 or hyper["dampening"] != 0):
        raise OptimizerError(
            "sgd: nesterov needs a momentum and zero dampening")
    return hyper

def state_names(name, hyper):
    """Names of the per-parameter state tensors, in order (torch.optim's
    keys)."""
    if name == "sgd":
        return ["momentum_buffer"] if hyper["momentum"] != 0 else []
    if name == "rmsprop":
        return (["square_avg"]
                + (["momentum_buffer"] if hyper["momentum"] > 0 else [])
                + (["grad_avg"] if hyper["centered"] else []))
    if name == "adagrad":
        return ["sum"]
    names = ["exp_avg", "exp_avg_sq"]
    if hyper["amsgrad"]:
        names.append("max_exp_avg_sq")
    return names

def initial_state(name, hyper, key):
    """The value every element of state `key` starts from: 0, but
    Adagrad's sum starts from initial_accumulator_value."""
    return hyper["initial_accumulator_value"] if name == "adagrad" else 0.0


def uses_step(name, hyper):
    """Whether the optimizer needs the step counter."""
    return name != "sgd" or hyper["momentum"] != 0

def update(name, hyper, params, grads, states, step):
    """One optimizer step. `states` holds a dict per parameter (keys from
    state_names), `step` the number of steps done so far. A parameter
    without gradient (unused by the loss) keeps its value and state, as
    torch.optim skips it. Returns (new params, new states, new step)."""
    new_step = step + 1 if step is not None else None
    corrections = (_bias_corrections(hyper, new_step)
                   if name in ("adam", "adamw") else None)
    new_params, new_states = [], []
    for param, grad, state in zip(params, grads, states):
        if grad is None:
            new_params.append(param)
            new_states.append(dict(state))
            continue
        if name == "sgd":
            p, s = _sgd(hyper, param, grad, state, step)
        elif name == "rmsprop":
            p, s = _rmsprop(hyper, param, grad, state)
        elif name == "adagrad":
            p, s = _adagrad(hyper, param, grad, state, step)
        else:
            p, s = _adam(name, hyper, param, grad, state, corrections)
        new_params.append(p)
        new_states.append(s)
    return new_params, new_states, new_step


def _sgd(h, param, grad, state, step):
    d_p = -grad if h["maximize"] else grad
    if h["weight_decay"] != 0:
        d_p = d_p + h["weight_decay"] * param
    new_state = {}
    if h["momentum"] != 0:
        # torch.optim starts the buffer as a copy of the first d_p.
        old = state["momentum_buffer"]
        buf = torch.where(step == 0, d_p,
                          old * h["momentum"] + (1 - h["dampening"]) * d_p)
        new_state["momentum_buffer"] = buf
        d_p = d_p + h["momentum"] * buf if h["nesterov"] else buf
    return param - h["lr"] * d_p, new_state


def _rmsprop(h, param, grad, state):
    """torch.optim.RMSprop: grad over the root of a running mean of its
    square (less its running mean's square when centered), with momentum
    on that ratio."""
    if h["maximize"]:
        grad = -grad
    if h["weight_decay"] != 0:
        grad = grad + h["weight_decay"] * param
    alpha = h["alpha"]
    square_avg = state["square_avg"] * alpha + (1 - alpha) * grad * grad
    new_state = {"square_avg": square_avg}
    if h["centered"]:
        grad_avg = state["grad_avg"] * alpha + (1 - alpha) * grad
        new_state["grad_avg"] = grad_avg
        avg = torch.sqrt(square_avg - grad_avg * grad_avg) + h["eps"]
    else:
        avg = torch.sqrt(square_avg) + h["eps"]
    if h["momentum"] > 0:
        buf = state["momentum_buffer"] * h["momentum"] + grad / avg
        new_state["momentum_buffer"] = buf
        return param - h["lr"] * buf, new_state
    return param - h["lr"] * (grad / avg), new_state


def _adagrad(h, param, grad, state, step):
    """torch.optim.Adagrad: grad over the root of its running sum of
    squares, the learning rate decayed by 1 / (1 + (t - 1) lr_decay)."""
    if h["maximize"]:
        grad = -grad
    if h["weight_decay"] != 0:
        grad = grad + h["weight_decay"] * param
    # step counts the steps done before this one: t - 1.
    clr = h["lr"] / (1 + step.to(param.dtype) * h["lr_decay"])
    total = state["sum"] + grad * grad
    return param - clr * grad / (torch.sqrt(total) + h["eps"]), {"sum": total}


def _bias_corrections(h, step):
    """Adam's step size lr / (1 - beta1^t) and sqrt(1 - beta2^t), once per
    step for all parameters, in double precision as torch.optim computes
    them. beta^t is written as exp(t * log(beta)): torch.onnx exports a
    scalar base of Pow as a float32 constant, making Pow's result float32."""
    beta1, beta2 = h["betas"]
    step64 = step.to(torch.float64)
    step_size = h["lr"] / (1 - torch.exp(step64 * math.log(beta1)))
    correction2_sqrt = torch.sqrt(1 - torch.exp(step64 * math.log(beta2)))
    return step_size, correction2_sqrt


def _adam(name, h, param, grad, state, corrections):
    beta1, beta2 = h["betas"]
    if h["maximize"]:
        grad = -grad
    if name == "adamw":
        param = param * (1 - h["lr"] * h["weight_decay"])
    elif h["weight_decay"] != 0:
        grad = grad + h["weight_decay"] * param
    exp_avg = state["exp_avg"] * beta1 + (1 - beta1) * grad
    exp_avg_sq = state["exp_avg_sq"] * beta2 + (1 - beta2) * grad * grad
    new_state = {"exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
    step_size = corrections[0].to(param.dtype)
    correction2_sqrt = corrections[1].to(param.dtype)
    second = exp_avg_sq
    if h["amsgrad"]:
        second = torch.maximum(state["max_exp_avg_sq"], exp_avg_sq)
        new_state["max_exp_avg_sq"] = second
    denom = torch.sqrt(second) / correction2_sqrt + h["eps"]
    return param - step_size * (exp_avg / denom), new_state


def reference_step(name, hyper, params, grads, states, step):
    """The same step done by torch.optim itself, for tests: returns the new
    params, states and step as update() does."""
    cls = TORCH_CLASSES[name]
    tensors = [torch.nn.Parameter(p.detach().clone()) for p in params]
    for t, g in zip(tensors, grads):
        t.grad = None if g is None else g.detach().clone()
    opt = cls(tensors, **hyper)
    done = int(step.item()) if step is not None else 0
    for t, state in zip(tensors, states):
        if not state or done == 0:
            continue
        opt.state[t] = {k: v.detach().clone() for k, v in state.items()}
        if name != "sgd":
            opt.state[t]["step"] = torch.tensor(float(done))
    opt.step()
    new_states = []
    for t in tensors:
        s = opt.state.get(t, {})
        new_states.append({k: v.detach().clone() for k, v in s.items()
                           if k != "step" and v is not None})
    new_step = step + 1 if step is not None else None
    return [t.detach() for t in tensors], new_states, new_step

__all__ = ["DEFAULTS", "OptimizerError", "resolve", "state_names",
           "uses_step", "update", "reference_step"]
