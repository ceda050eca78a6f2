"""The functional optimizers against torch.optim itself."""
import pytest
import torch

from amp_opt import optim

CASES = [
    ("sgd", dict(lr=0.1)),
    ("sgd", dict(lr=0.1, momentum=0.9)),
    ("sgd", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("adam", dict()),
    ("adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("adam", dict(amsgrad=True, maximize=True)),
    ("adamw", dict()),
    ("adamw", dict(lr=0.01, weight_decay=0.5, amsgrad=True)),
    ("rmsprop", dict()),
    ("rmsprop", dict(lr=0.05, alpha=0.9, momentum=0.8, centered=True,
                     weight_decay=0.1, maximize=True)),
    ("adagrad", dict()),
    ("adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                     initial_accumulator_value=0.2, eps=1e-6)),
]


@pytest.mark.parametrize("name,kwargs", CASES)
def test_update_matches_torch_optim(name, kwargs):
    torch.manual_seed(0)
    hyper = optim.resolve(name, **kwargs)
    keys = optim.state_names(name, hyper)
    params = [torch.randn(4, 3, dtype=torch.float64),
              torch.randn(3, dtype=torch.float64)]
    states = [{k: torch.full_like(p, optim.initial_state(name, hyper, k))
               for k in keys} for p in params]
    step = torch.zeros(1) if optim.uses_step(name, hyper) else None
    ref = (params, states, step)
    ours = (params, states, step)
    for _ in range(4):
        grads = [torch.randn_like(p) for p in params]
        ours = optim.update(name, hyper, ours[0], grads, ours[1], ours[2])
        ref = optim.reference_step(name, hyper, ref[0], grads, ref[1], ref[2])
        for a, b in zip(ours[0], ref[0]):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)
        for a, b in zip(ours[1], ref[1]):
            assert set(a) == set(b)
            for key in a:
                torch.testing.assert_close(a[key], b[key], rtol=1e-12,
                                           atol=1e-14)


def test_unused_parameter_keeps_value_and_state():
    hyper = optim.resolve("adam")
    param = torch.ones(2)
    state = {"exp_avg": torch.full((2,), 0.5), "exp_avg_sq": torch.ones(2)}
    params, states, step = optim.update("adam", hyper, [param], [None],
                                        [state], torch.zeros(1))
    assert params[0] is param
    torch.testing.assert_close(states[0]["exp_avg"], state["exp_avg"])
    assert step.item() == 1


@pytest.mark.parametrize("call,message", [
    (lambda: optim.resolve("lamb"), "unknown optimizer 'lamb'"),
    (lambda: optim.resolve("sgd"), "needs a learning rate"),
    (lambda: optim.resolve("adam", momentum=0.9),
     "unknown adam hyper-parameter(s) momentum"),
    (lambda: optim.resolve("sgd", lr=0.1, nesterov=True),
     "nesterov needs a momentum"),
])
def test_bad_hyper_parameters(call, message):
    with pytest.raises(optim.OptimizerError, match=message.replace(
            "(", r"\(").replace(")", r"\)")):
        call()


def test_defaults_are_torch_optims():
    import inspect
    for name, cls in optim.TORCH_CLASSES.items():
        signature = inspect.signature(cls.__init__).parameters
        for key, value in optim.DEFAULTS[name].items():
            if key == "lr" and name == "sgd":
                continue
            assert signature[key].default == value, (name, key)
