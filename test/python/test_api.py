"""amp_opt.convert over the amp-opt binary."""
import os

import onnx
import pytest

from amp_opt import AmpOptError, api, convert, zoo


@pytest.fixture(scope="module")
def mlp_step(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("zoo") / "mlp_adam.onnx")
    zoo.export("mlp", "adam", path)
    return path


def needs_amp_opt():
    try:
        api.find_amp_opt()
    except AmpOptError as error:
        pytest.skip(str(error))


def test_round_trip_from_path(mlp_step):
    needs_amp_opt()
    model, report = convert(mlp_step, precision=None)
    original = onnx.load(mlp_step)
    assert [n.op_type for n in model.graph.node] == \
        [n.op_type for n in original.graph.node]
    assert {p.key: p.value for p in model.metadata_props} == \
        {p.key: p.value for p in original.metadata_props}
    assert report == {}


def test_round_trip_from_model_proto(mlp_step):
    needs_amp_opt()
    model, _ = convert(onnx.load(mlp_step), precision=None)
    assert len(model.graph.initializer) + len(model.graph.input) > 0


def test_amp_opt_errors_are_raised(tmp_path):
    needs_amp_opt()
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(AmpOptError, match="not an ONNX model"):
        convert(str(bad), precision=None)
    with pytest.raises(AmpOptError, match="no such model file"):
        convert(str(tmp_path / "missing.onnx"), precision=None)


def test_pipeline_options_reach_amp_opt():
    assert api._pipeline_text("fp16", {"loss_scale": "dynamic",
                                       "keep_io_types": True}) == \
        "precision=fp16 loss-scale=dynamic keep-io-types=true"


def test_missing_binary_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("AMP_OPT", str(tmp_path / "nothing"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(api, "REPO", str(tmp_path))
    with pytest.raises(AmpOptError, match="amp-opt not found"):
        convert(os.devnull)


def test_convert_runs_the_pipeline_and_returns_the_report(mlp_step):
    needs_amp_opt()
    model, report = convert(mlp_step, precision="fp16",
                            op_class="Gemm:always,MatMul:always")
    onnx.checker.check_model(model)
    assert report["precision"] == "fp16"
    assert report["ops"]["by_type"]["Gemm"]["low_precision"] > 0
    assert report["casts"]["remaining"] > 0
    decisions = {d["reason"] for d in report["decisions"]}
    assert {"policy", "keep-fp32"} <= decisions
