"""amp_opt: export PyTorch training steps to ONNX and drive amp-opt.

- amp_opt.export.export_training_step: one ONNX graph per training step.
- amp_opt.zoo: the model zoo (python3 -m amp_opt.zoo --out DIR).
- amp_opt.convert: run amp-opt on a model, get the ONNX model back.
- amp_opt.ort: run a model in ONNX Runtime (npm onnxruntime-node).
"""
import importlib

# Attributes load their module on first use, so that `python3 -m
# amp_opt.export` does not import amp_opt.export twice.
_ATTRIBUTES = {"AmpOptError": "api", "convert": "api",
               "ExportError": "export", "export_training_step": "export"}
__all__ = sorted(_ATTRIBUTES)


def __getattr__(name):
    if name in _ATTRIBUTES:
        module = importlib.import_module(f".{_ATTRIBUTES[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module 'amp_opt' has no attribute '{name}'")
