#!/usr/bin/python3
"""Writes docs/PrecisionClasses.md from the op table (OpTable.def).

    docs/gen_precision_classes.py [--check]

--check exits 1 when the committed page differs from the table.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "include", "amp", "Dialect", "ONNXGraph",
                     "IR", "OpTable.def")
PAGE = os.path.join(HERE, "PrecisionClasses.md")
CLASSES = {"Always": "always", "Follow": "follow", "Infer": "infer",
           "KeepFP32": "keep-fp32", "NeverTouch": "never-touch"}
HEADER = """# Precision classes of ONNX op types

Generated from `include/amp/Dialect/ONNXGraph/IR/OpTable.def` by
`docs/gen_precision_classes.py` (`make docs`); do not edit. The classes
follow `shared/reference/amp-anchors.md` section (c):

- **always**: low precision whenever the cost model agrees; seeds
  low-precision regions.
- **follow**: takes the precision of its data producers; exact in any
  precision.
- **infer**: low precision only between or after always ops.
- **keep-fp32**: computes in FP32 and stops propagation.
- **never-touch**: not a float computation, or types fixed (optimizers,
  runtime ops, unknown op types): no type changes, no casts.

Data operands and results are the float slots a decision may retype; the
others (shapes, indices, BatchNormalization's statistics, Dropout's ratio)
keep their types. A scatter with `reduction` other than `none` is keep-fp32
whatever its row says, and so is a `Mul` of a value by itself (a square, as
`Pow`: a decomposed BatchNorm's or RMSNorm's variance). Passes read all of this through
`PrecisionOpInterface` (`include/amp/Interfaces`).

The last two columns are what amp-analyze-training's seed linearity reads
(docs/TrainingGraphs.md): the results are linear in the backward seed when
exactly one *linear (product)* operand is and every present *linear (sum)*
operand is (or is a constant zero), the other operands not depending on it.

| domain | op type | family | class | data operands | data results | linear (product) | linear (sum) |
|---|---|---|---|---|---|---|---|
"""


def slots(text):
    text = text.strip()
    if text == "kAll":
        return "all"
    if text == "kNone":
        return "none"
    return ", ".join(re.findall(r"\d+", text))


def render():
    source = open(TABLE).read()
    rows = re.findall(
        r'AMP_OP\("([^"]*)",\s*"([^"]+)",\s*(\w+),\s*(\w+),\s*'
        r'(kAll|kNone|slots\([^)]*\)),\s*(kAll|kNone|slots\([^)]*\)),\s*'
        r'(kAll|kNone|slots\([^)]*\)),\s*(kAll|kNone|slots\([^)]*\))\)',
        source)
    lines = [f"| {domain or 'ai.onnx'} | {op} | {family.lower()} | "
             f"{CLASSES[cls]} | {slots(ops)} | {slots(res)} | "
             f"{slots(product)} | {slots(total)} |"
             for domain, op, family, cls, ops, res, product, total in rows]
    return HEADER + "\n".join(lines) + "\n"


def main():
    page = render()
    if "--check" in sys.argv[1:]:
        current = open(PAGE).read() if os.path.exists(PAGE) else ""
        if current != page:
            print(f"{PAGE} is out of date: run make docs", file=sys.stderr)
            return 1
        print("up to date")
        return 0
    with open(PAGE, "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
