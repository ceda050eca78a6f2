"""amp-run's GEMMs go through OpenBLAS (amp-raise-contractions,
amp-contractions-to-blas, libamp_cpu_runtime) and give numpy's products
for every layout the runtime meets: transposed operands, batch loops,
broadcast weights and batches, several M or K loops, an output BLAS cannot
write in place, operands it has to pack (f16, bf16, non-collapsible
loops), and f64. With --gemm-records the same products run through the
CUDA backend's cuBLASLt-style records (amp-contractions-to-gemm-records),
executed by OpenBLAS's column-major GEMM: a wrong transpose, leading
dimension or batch stride fails here, and on every zoo step."""
import os
import re
import subprocess

import numpy as np
import pytest

from amp_opt import api, numerics, zoo

LETTERS = "abcdefgh"


def to_type(x, element):
    """x rounded to `element` (nearest even), as float64."""
    if element == "f16":
        return x.astype(np.float16).astype(np.float64)
    if element == "bf16":
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


# (name, loops with sizes, A's and B's and C's loops in storage order,
#  operand element type, accumulator type). A loop letter that is "0" in an
# input indexes a size-1 dimension by the constant 0 (a broadcast batch).
CASES = [
    ("plain", dict(m=8, n=16, k=32), "mk", "kn", "mn", "f32", "f32"),
    ("transposed", dict(m=8, n=16, k=32), "km", "nk", "mn", "f32", "f32"),
    ("batch_weight", dict(b=2, m=8, n=16, k=32), "bmk", "kn", "bmn", "f32",
     "f32"),
    ("attention", dict(b=2, h=3, m=8, n=8, k=4), "bhmk", "bhnk", "bhmn",
     "f32", "f32"),
    ("output_transposed", dict(m=8, n=16, k=32), "mk", "kn", "nm", "f32",
     "f32"),
    ("two_reductions", dict(m=8, n=16, t=4, s=2), "tsm", "tsn", "mn", "f32",
     "f32"),
    ("uncollapsible_m", dict(b=2, m=8, n=16, k=32), "mbk", "kn", "bmn",
     "f32", "f32"),
    ("broadcast_batch", dict(b=3, m=6, n=10, k=12), "0mk", "bkn", "bmn",
     "f32", "f32"),
    ("bf16", dict(m=8, n=16, k=32), "mk", "nk", "mn", "bf16", "f32"),
    ("f16_batch", dict(b=2, m=8, n=16, k=32), "bmk", "bkn", "bmn", "f16",
     "f32"),
    ("f64", dict(m=8, n=16, k=32), "mk", "kn", "mn", "f64", "f64"),
]


def shape_of(loops, sizes):
    return [1 if loop == "0" else sizes[loop] for loop in loops]


def tensor(shape, element):
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def program(sizes, a, b, c, element, acc):
    """An MLIR function: f32 (or f64) inputs rounded to `element`, one
    multiply-accumulate generic into a zero accumulator."""
    loops = list(sizes)
    dims = ", ".join(loops)

    def map_of(operand):
        return f"affine_map<({dims}) -> ({', '.join(operand)})>"

    source = "f64" if acc == "f64" else "f32"
    a_shape, b_shape = shape_of(a, sizes), shape_of(b, sizes)
    c_shape = shape_of(c, sizes)
    lines = [f"func.func @main(%x: {tensor(a_shape, source)} loc(\"x\"), "
             f"%y: {tensor(b_shape, source)} loc(\"y\")) -> "
             f"{tensor(c_shape, acc)} {{"]
    operands = []
    for name, shape in (("x", a_shape), ("y", b_shape)):
        if element == source:
            operands.append(f"%{name}")
            continue
        rank = len(shape)
        identity = ", ".join(f"d{i}" for i in range(rank))
        imap = f"affine_map<({identity}) -> ({identity})>"
        parallel = ", ".join(['"parallel"'] * rank)
        lines += [
            f"  %{name}e = tensor.empty() : {tensor(shape, element)}",
            f"  %{name}t = linalg.generic {{indexing_maps = [{imap}, {imap}], "
            f"iterator_types = [{parallel}]}} "
            f"ins(%{name} : {tensor(shape, source)}) "
            f"outs(%{name}e : {tensor(shape, element)}) {{",
            f"  ^bb0(%in: {source}, %out: {element}):",
            f"    %t = arith.truncf %in : {source} to {element}",
            f"    linalg.yield %t : {element}",
            f"  }} -> {tensor(shape, element)}"]
        operands.append(f"%{name}t")
    iterators = ", ".join('"parallel"' if loop in c else '"reduction"'
                          for loop in loops)
    widen = element != acc
    body = ["  ^bb0(%p: ELEMENT, %q: ELEMENT, %r: ACC):".replace(
        "ELEMENT", element).replace("ACC", acc)]
    if widen:
        body += [f"    %pw = arith.extf %p : {element} to {acc}",
                 f"    %qw = arith.extf %q : {element} to {acc}"]
    p, q = ("%pw", "%qw") if widen else ("%p", "%q")
    body += [f"    %m = arith.mulf {p}, {q} : {acc}",
             f"    %s = arith.addf %r, %m : {acc}",
             f"    linalg.yield %s : {acc}"]
    lines += [
        f"  %zero = arith.constant 0.0 : {acc}",
        f"  %ce = tensor.empty() : {tensor(c_shape, acc)}",
        f"  %acc = linalg.fill ins(%zero : {acc}) outs(%ce : "
        f"{tensor(c_shape, acc)}) -> {tensor(c_shape, acc)}",
        f"  %out = linalg.generic {{indexing_maps = [{map_of(a)}, "
        f"{map_of(b)}, {map_of(c)}], iterator_types = [{iterators}]}} "
        f"ins({operands[0]}, {operands[1]} : "
        f"{tensor(a_shape, element)}, {tensor(b_shape, element)}) "
        f"outs(%acc : {tensor(c_shape, acc)}) {{",
        *body,
        f"  }} -> {tensor(c_shape, acc)}",
        f"  return %out : {tensor(c_shape, acc)}",
        "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("records", [False, True], ids=["blas", "records"])
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_gemm_through_blas_matches_numpy(case, records, tmp_path):
    name, sizes, a, b, c, element, acc = case
    rng = np.random.default_rng(len(name))
    dtype = np.float64 if acc == "f64" else np.float32
    x = rng.standard_normal(shape_of(a, sizes)).astype(dtype)
    y = rng.standard_normal(shape_of(b, sizes)).astype(dtype)
    path = tmp_path / f"{name}.mlir"
    path.write_text(program(sizes, a, b, c, element, acc))
    lowered = tmp_path / "lowered.mlir"
    saved = api.run_with_inputs(
        path, {"x": x, "y": y}, tmp_path,
        args=["--dump-lowered", str(lowered)] + (["--gemm-records"] if records
                                                 else []))
    # The product went through the runtime, with the operand types; every
    # case has a record.
    entry = "amp_gemm_" if records else "amp_contract_"
    calls = re.findall(r"call @(amp_\w+)\(", lowered.read_text())
    assert calls == [f"{entry}{element}_{element}_{acc}"]

    letters = {loop: LETTERS[i] for i, loop in enumerate(sizes)}
    spec = ",".join("".join(letters[loop] for loop in operand if loop != "0")
                    for operand in (a, b)) + "->" + "".join(
                        letters[loop] for loop in c)
    squeeze = [i for i, loop in enumerate(a) if loop == "0"]
    expected = np.einsum(spec, to_type(x, element).squeeze(tuple(squeeze)),
                         to_type(y, element))
    got = saved["output0"]
    assert got.dtype == dtype and got.shape == expected.shape
    tolerance = 1e-12 if acc == "f64" else 1e-5
    np.testing.assert_allclose(got, expected, rtol=tolerance,
                               atol=tolerance * np.abs(expected).max())


# (pipeline, the relative size of one unit in the last place of its lowest
# precision): the records sum in another order than the BLAS path (the
# operands swapped), so a value rounded to that precision may differ by one
# unit, up to two of its value's at the bottom of a binade.
RECORD_PRECISIONS = numerics.FORCED_PRECISIONS


def count_scaled_matmuls(path, pipeline):
    """The FP8 GEMMs (amp.scaled_matmul) of `path` after `pipeline`."""
    run = subprocess.run(
        [api.find_tool("amp-opt"), path, f"--amp-pipeline={pipeline}"],
        check=True, capture_output=True, text=True)
    return len(re.findall(r"= amp\.scaled_matmul ", run.stdout))


@pytest.mark.parametrize("precision", RECORD_PRECISIONS)
@pytest.mark.parametrize("name", zoo.MODELS)
def test_zoo_steps_run_through_gemm_records(name, precision, zoo_steps,
                                            tmp_path):
    """Every GEMM of every small zoo step has a record, and a step
    through the records give the BLAS path's outputs: within two units in
    the last place of the step's lowest precision, and 99% of the values
    within FP32's rounding (a wrong layout changes nearly all)."""
    pipeline, ulp = RECORD_PRECISIONS[precision]
    if why := numerics.why_no_forced_step(name, precision):
        pytest.skip(why)
    outputs = {}
    gemms = 0  # counted in the BLAS run, the first
    for records in (False, True):
        folder = tmp_path / ("records" if records else "blas")
        lowered = tmp_path / f"{folder.name}.mlir"
        run = subprocess.run(
            [api.find_tool("amp-run"), zoo_steps[name, "sgd"], "--steps", "1",
             f"--amp-pipeline={pipeline}", "--save-outputs", str(folder),
             "--dump-lowered", str(lowered)] +
            (["--gemm-records"] if records else []),
            check=True, capture_output=True)
        text = lowered.read_text()
        outputs[records] = {f: np.load(folder / f)
                            for f in sorted(os.listdir(folder))}
        if records:
            assert "call @amp_contract_" not in text
            assert len(re.findall(r"call @amp_gemm_", text)) == gemms
            assert (f"GEMM records: {gemms} of {gemms} GEMMs"
                    in run.stderr.decode())
            # Each FP8 GEMM through an FP8 record, on its FP8 data.
            fp8 = count_scaled_matmuls(zoo_steps[name, "sgd"], pipeline)
            assert (fp8 > 0) == (precision == "fp8")
            assert len(re.findall(r"call @amp_gemm_f8", text)) == fp8
            # A Linear's bias addition is the GEMM's epilogue (in FP32;
            # in AMP the addition also rounds, and stays a kernel).
            if precision == "fp32" and name != "cnn":
                assert "call @amp_gemm_bias_f32_f32_f32" in text
            # And the MLP's ReLU after each hidden Linear too (RELU_BIAS:
            # bias=1 activation=1, the record's last two fields; in AMP
            # with the rounded bias), the second's writing its mask
            # (RELU_AUX_BIAS: activation=5) for its backward (DRELU: bias=0
            # activation=6; the first's backward writes into dY, the
            # GEMM's own input).
            if precision in ("fp32", "fp16", "bf16") and name == "mlp":
                fields = [[int(v) for v in record.split(",")]
                          for record in re.findall(
                              r"@amp_gemm_record\w*\(dense<\[([^\]]*)\]>",
                              text)]
                assert sum(f[-2:] == [1, 1] for f in fields) == 1
                assert sum(f[-2:] == [1, 5] for f in fields) == 1
                assert sum(f[-2:] == [0, 6] for f in fields) == 1
            # In AMP, the bias too where the next kernel adds it (rounded
            # to f16 or bf16) and rounds the sum, and does nothing else (or
            # goes on, on D of 2^20 elements or more: none here): the GEMM
            # writes D + bias rounded (the MLP: both hidden layers).
            if precision in ("fp16", "bf16") and name != "cnn":
                t = {"fp16": "f16", "bf16": "bf16"}[precision]
                rounded = len(re.findall(
                    rf"call @amp_gemm_bias_(mask_)?{t}_{t}_{t}\(", text))
                assert rounded == 2 if name == "mlp" else rounded > 0
            # A Linear's bias gradient is its weight gradient's epilogue
            # (in FP32; in AMP the sum reads dY before its rounding).
            if precision == "fp32":
                assert "call @amp_gemm_bgrad_f32_f32_f32" in text
        else:
            gemms = len(re.findall(r"call @amp_contract_", text))
            assert gemms > 0
    assert outputs[True].keys() == outputs[False].keys()
    for f, blas in outputs[False].items():
        got = outputs[True][f].astype(np.float64)
        blas = blas.astype(np.float64)
        np.testing.assert_allclose(got, blas, rtol=2 * ulp, atol=1e-6,
                                   err_msg=f)
        close = np.isclose(got, blas, rtol=1e-5, atol=1e-6)
        assert close.mean() >= 0.99, f


GELU_ENTRIES = {"fp32": "f32_f32_f32", "fp16": "f16_f16_f16",
                "bf16": "bf16_bf16_bf16"}


def export_tanh_gelu_step(path):
    """A Linear, GELU's tanh approximation (PyTorch decomposes it into Mul,
    Add and Tanh), Linear training step (SGD) at `path`."""
    torch = pytest.importorskip("torch")
    from amp_opt import export
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64),
                                torch.nn.GELU(approximate="tanh"),
                                torch.nn.Linear(64, 8))
    export.export_training_step(
        model, (torch.randn(16, 32),), (torch.randint(0, 8, (16,)),),
        torch.nn.functional.cross_entropy, str(path), optimizer="sgd",
        lr=0.5)


def count_gelu_epilogues(text, precision):
    """The calls with GELU_AUX_BIAS and DGELU records in a lowered step:
    their entry points (the aux matrix's) and the records' activations."""
    entry = GELU_ENTRIES[precision]
    activations = [int(record.split(",")[-1]) for record in re.findall(
        r"@amp_gemm_record\w*\(dense<\[([^\]]*)\]>", text)]
    return (len(re.findall(rf"call @amp_gemm_bias_aux_{entry}\(", text)),
            len(re.findall(rf"call @amp_gemm_aux_{entry}\(", text)),
            activations.count(3), activations.count(4))


@pytest.mark.parametrize("precision", sorted(GELU_ENTRIES))
def test_tanh_gelu_step_takes_gelu_epilogues(precision, tmp_path):
    """A Linear, GELU (tanh), Linear step: the first GEMM writes GELU and its input
    (GELU_AUX_BIAS: the record's activation 3, the bias and the aux
    matrix), the GEMM of GELU's output gradient multiplies by GELU's
    derivative at that input (DGELU: activation 4), and no GELU kernel is
    left. After 4 steps, the records' CPU reference gives the BLAS path's
    outputs (numerics.backend_mismatch: FP32 within 1e-5; AMP, where the
    kernels compute GELU in f16/bf16 with rounded constants and the
    epilogue in f32, within 2 units in the last place, or norm-wise within
    one), and the step trains."""
    path = tmp_path / "gelu.onnx"
    export_tanh_gelu_step(path)
    pipeline, ulp = RECORD_PRECISIONS[precision]
    outputs, losses = {}, {}
    for records in (False, True):
        folder = tmp_path / f"{precision}{records}"
        lowered = tmp_path / f"{folder.name}.mlir"
        run = subprocess.run(
            [api.find_tool("amp-run"), str(path), "--steps", "4",
             f"--amp-pipeline={pipeline}", "--save-outputs", str(folder),
             "--dump-lowered", str(lowered)] +
            (["--gemm-records"] if records else []),
            check=True, capture_output=True, text=True)
        losses[records] = [float(line.split('"loss": ')[1].split(",")[0])
                           for line in run.stdout.splitlines()]
        outputs[records] = {f: np.load(folder / f)
                            for f in sorted(os.listdir(folder))}
        text = lowered.read_text()
        if records:
            assert count_gelu_epilogues(text, precision) == (1, 1, 1, 1)
            assert "math.tanh" not in text and "llvm.intr.tanh" not in text
        else:
            assert "amp_gemm_" not in text
    for f, blas in outputs[False].items():
        why = numerics.backend_mismatch(outputs[True][f], blas, ulp)
        assert why is None, f"{f}: {why}"
    assert losses[True][-1] < losses[True][0] - 0.05, losses


@pytest.mark.parametrize("spelling", ["FastGelu", "Gelu"])
def test_onnx_tanh_gelu_ops_take_gelu_epilogues(spelling, tmp_path):
    """ONNX Runtime's FastGelu (with its bias input) and ONNX's Gelu
    (opset 20, approximate="tanh") after a MatMul are the GEMM's GELU
    epilogue (GELU_BIAS: bias 1, activation 2; GELU: activation 2), and
    FastGeluGrad after the MatMul of dY its DGELU (activation 4, the
    graph's input `pre` its aux matrix); the records give the BLAS path's
    outputs."""
    from onnx import helper
    from test_amp_run_contrib_ops import run_nodes
    rng = np.random.default_rng(0)
    inputs = dict(
        x=rng.standard_normal((16, 32)).astype(np.float32),
        w=(rng.standard_normal((32, 64)) * 0.2).astype(np.float32),
        b=rng.standard_normal(64).astype(np.float32),
        g=rng.standard_normal((16, 8)).astype(np.float32),
        w2=rng.standard_normal((8, 64)).astype(np.float32),
        pre=rng.standard_normal((16, 64)).astype(np.float32))
    if spelling == "FastGelu":
        gelu = helper.make_node("FastGelu", ["xw", "b"], ["y"],
                                domain="com.microsoft")
    else:
        del inputs["b"]
        gelu = helper.make_node("Gelu", ["xw"], ["y"], approximate="tanh")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]), gelu,
             helper.make_node("MatMul", ["g", "w2"], ["gw"]),
             helper.make_node("FastGeluGrad", ["gw", "pre"], ["dx"],
                              domain="com.microsoft")]
    outputs = dict(y=(16, 64), dx=(16, 64))
    results = {}
    for records in (False, True):
        folder = tmp_path / str(records)
        folder.mkdir()
        lowered = folder / "lowered.mlir"
        results[records] = run_nodes(
            folder, nodes, inputs, outputs, opset=20,
            extra=["--dump-lowered", str(lowered)] +
            (["--gemm-records"] if records else []))
    fields = sorted(tuple(int(v) for v in record.split(",")[-2:])
                    for record in re.findall(
                        r"@amp_gemm_record\w*\(dense<\[([^\]]*)\]>",
                        lowered.read_text()))
    bias = 1 if spelling == "FastGelu" else 0
    assert fields == sorted([(bias, 2), (0, 4)]), fields
    for name in outputs:
        np.testing.assert_allclose(results[True][name], results[False][name],
                                   rtol=1e-5, atol=1e-6, err_msg=name)
