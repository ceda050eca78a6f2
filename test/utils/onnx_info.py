#!/usr/bin/python3
"""Prints an ONNX model as stable text for FileCheck: onnx_info.py MODEL."""
import sys

import onnx
from onnx import helper


# Element types newer than Debian's onnx 1.12 (opset 19's FP8).
NEWER_TYPES = {17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2",
               20: "FLOAT8E5M2FNUZ"}


def type_str(t):
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        code = t.tensor_type.elem_type
        elt = NEWER_TYPES.get(code) or onnx.TensorProto.DataType.Name(code)
        if not t.tensor_type.HasField("shape"):
            return f"{elt}[*]"
        dims = [str(d.dim_value) if d.HasField("dim_value") else
                (d.dim_param or "?") for d in t.tensor_type.shape.dim]
        return f"{elt}[{','.join(dims)}]"
    if kind == "sequence_type":
        return f"seq({type_str(t.sequence_type.elem_type)})"
    return "untyped" if kind is None else kind


def storage_str(t):
    """Where an external tensor's bytes are: ' external FILE offset O length
    L'; nothing for an inline one."""
    if t.data_location != onnx.TensorProto.EXTERNAL:
        return ""
    entries = {e.key: e.value for e in t.external_data}
    return (f" external {entries.get('location')} offset "
            f"{entries.get('offset', 0)} length {entries.get('length')}")


def attr_str(a):
    value = helper.get_attribute_value(a)
    if a.type == onnx.AttributeProto.TENSOR:
        return (f"{a.name}=tensor({onnx.TensorProto.DataType.Name(value.data_type)}"
                f"{list(value.dims)}{storage_str(value)})")
    if a.type == onnx.AttributeProto.GRAPH:
        return f"{a.name}=graph({value.name})"
    return f"{a.name}={value!r}"


def print_graph(g, indent):
    pad = " " * indent
    for i in g.input:
        print(f"{pad}input {i.name}: {type_str(i.type)}")
    for t in g.initializer:
        print(f"{pad}initializer {t.name}: "
              f"{onnx.TensorProto.DataType.Name(t.data_type)}{list(t.dims)}"
              f"{storage_str(t)}")
    for n in g.node:
        dom = f"{n.domain}::" if n.domain else ""
        attrs = " ".join(attr_str(a) for a in n.attribute)
        print(f"{pad}node '{n.name}' {dom}{n.op_type}({', '.join(n.input)}) "
              f"-> ({', '.join(n.output)}) {attrs}".rstrip())
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                print_graph(a.g, indent + 2)
    for v in g.value_info:
        print(f"{pad}value {v.name}: {type_str(v.type)}")
    for o in g.output:
        print(f"{pad}output {o.name}: {type_str(o.type)}")


def main(path):
    m = onnx.load(path, load_external_data=False)
    print(f"ir_version {m.ir_version} producer '{m.producer_name}'")
    for o in m.opset_import:
        print(f"opset '{o.domain}' {o.version}")
    for p in m.metadata_props:
        print(f"metadata {p.key}={p.value}")
    print(f"graph '{m.graph.name}'")
    print_graph(m.graph, 2)


if __name__ == "__main__":
    main(sys.argv[1])
