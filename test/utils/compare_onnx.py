#!/usr/bin/python3
"""Checks that an ONNX model survived amp-opt without loss.

  compare_onnx.py ORIGINAL.onnx ROUNDTRIP.onnx   compare two files
  compare_onnx.py --round-trip AMP_OPT DIR...    round-trip every .onnx under
                                                 DIR through AMP_OPT, compare

Compares model fields, opset imports, metadata, graph inputs and outputs
(names and types), nodes (names, op types, domains, inputs, outputs,
attributes, subgraphs), initializer bytes and every value_info type of the
original. Node order may differ (the importer sorts unsorted graphs).
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


class Mismatch(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Mismatch(what)


def tensor_key(t):
    arr = numpy_helper.to_array(t)
    return (t.data_type, tuple(t.dims), arr.tobytes() if arr.dtype != object
            else tuple(arr.flatten()))


def compare_type(a, b, where, exact):
    """`a` is the original type; `b` may carry more inferred shape."""
    if exact:
        expect(a == b, f"{where}: type {a} != {b}")
        return
    kind = a.WhichOneof("value")
    if kind is None:
        return
    expect(kind == b.WhichOneof("value"), f"{where}: type kind differs")
    if kind == "tensor_type":
        ta, tb = a.tensor_type, b.tensor_type
        if ta.elem_type:
            expect(ta.elem_type == tb.elem_type, f"{where}: element type "
                   f"{ta.elem_type} != {tb.elem_type}")
        if ta.HasField("shape"):
            expect(tb.HasField("shape") and len(ta.shape.dim) ==
                   len(tb.shape.dim), f"{where}: rank differs")
            for da, db in zip(ta.shape.dim, tb.shape.dim):
                if da.HasField("dim_value"):
                    expect(db.dim_value == da.dim_value,
                           f"{where}: dim {da} != {db}")
                elif da.HasField("dim_param"):
                    expect(db.dim_param == da.dim_param or
                           db.HasField("dim_value"),
                           f"{where}: dim {da.dim_param} lost")
    elif kind == "sequence_type":
        compare_type(a.sequence_type.elem_type, b.sequence_type.elem_type,
                     where, exact)


def compare_attr(a, b, where):
    expect(a.name == b.name, f"{where}: attribute {a.name} vs {b.name}")
    where = f"{where} attribute '{a.name}'"
    expect(a.type == b.type or a.type == 0, f"{where}: kind {a.type} != {b.type}")
    t = b.type
    A = onnx.AttributeProto
    if t == A.FLOAT:
        expect(np.float32(a.f).tobytes() == np.float32(b.f).tobytes(), where)
    elif t == A.INT:
        expect(a.i == b.i, where)
    elif t == A.STRING:
        expect(a.s == b.s, where)
    elif t == A.TENSOR:
        expect(tensor_key(a.t) == tensor_key(b.t), f"{where}: tensor differs")
    elif t == A.GRAPH:
        compare_graph(a.g, b.g, where)
    elif t == A.FLOATS:
        expect(np.array(a.floats, np.float32).tobytes() ==
               np.array(b.floats, np.float32).tobytes(), where)
    elif t == A.INTS:
        expect(list(a.ints) == list(b.ints), where)
    elif t == A.STRINGS:
        expect(list(a.strings) == list(b.strings), where)
    elif t == A.TENSORS:
        expect([tensor_key(x) for x in a.tensors] ==
               [tensor_key(x) for x in b.tensors], where)
    elif t in (A.TYPE_PROTO,):
        compare_type(a.tp, b.tp, where, exact=True)
    else:
        raise Mismatch(f"{where}: unexpected kind {t}")


def node_key(n):
    return (tuple(n.output), n.op_type, n.name, tuple(n.input))


def compare_graph(a, b, where):
    expect(a.name == b.name, f"{where}: graph name {a.name!r} != {b.name!r}")
    expect(a.doc_string == b.doc_string, f"{where}: graph doc_string differs")
    expect([i.name for i in a.input] == [i.name for i in b.input],
           f"{where}: inputs {[i.name for i in a.input]} != "
           f"{[i.name for i in b.input]}")
    for x, y in zip(a.input, b.input):
        compare_type(x.type, y.type, f"{where} input '{x.name}'", exact=False)
    expect([o.name for o in a.output] == [o.name for o in b.output],
           f"{where}: outputs differ")
    for x, y in zip(a.output, b.output):
        compare_type(x.type, y.type, f"{where} output '{x.name}'", exact=False)
    ia = {t.name: tensor_key(t) for t in a.initializer}
    ib = {t.name: tensor_key(t) for t in b.initializer}
    expect(ia.keys() == ib.keys(), f"{where}: initializer names differ: "
           f"{sorted(set(ia) ^ set(ib))[:5]}")
    for name in ia:
        expect(ia[name] == ib[name], f"{where}: initializer '{name}' differs")
    expect(len(a.node) == len(b.node),
           f"{where}: {len(a.node)} nodes != {len(b.node)}")
    for x, y in zip(sorted(a.node, key=node_key), sorted(b.node, key=node_key)):
        w = f"{where} node '{x.name}' ({x.op_type})"
        for field in ("name", "op_type", "domain", "doc_string"):
            expect(getattr(x, field) == getattr(y, field),
                   f"{w}: {field} {getattr(x, field)!r} != "
                   f"{getattr(y, field)!r}")
        expect(list(x.input) == list(y.input), f"{w}: inputs differ")
        expect(list(x.output) == list(y.output), f"{w}: outputs differ")
        xa = sorted(x.attribute, key=lambda t: t.name)
        ya = sorted(y.attribute, key=lambda t: t.name)
        expect(len(xa) == len(ya), f"{w}: attribute count differs")
        for p, q in zip(xa, ya):
            compare_attr(p, q, w)
    produced = {o for n in a.node for o in n.output}
    vb = {v.name: v.type for v in b.value_info}
    vb.update({v.name: v.type for v in b.output})
    for v in a.value_info:
        if v.name not in produced:
            continue  # initializers and dangling names: no node value
        if v.name in vb:
            compare_type(v.type, vb[v.name], f"{where} value '{v.name}'",
                         exact=False)
        else:
            expect(not v.type.tensor_type.elem_type,
                   f"{where}: value_info of '{v.name}' lost")


def rename_redefinitions(graph):
    """Renames the definitions of a value name that `graph` defines twice
    (invalid ONNX) as amp-opt writes them: a name that only Constant nodes
    define stays the last one's (ONNX Runtime's reading), any other the
    first one's, readers reading the latest definition before them; the
    others become `<name>_<k>`, the smallest k unused in the graph. Returns
    how many it renamed."""
    taken = {i.name for i in graph.input} | {t.name for t in
                                             graph.initializer}
    producers = {}
    for i, node in enumerate(graph.node):
        taken.update(node.input)
        taken.update(node.output)
        for name in node.output:
            if name:
                producers.setdefault(name, []).append(i)
    current, renamed = {}, 0
    for i, node in enumerate(graph.node):
        for j, name in enumerate(node.input):
            node.input[j] = current.get(name, name)
        for j, name in enumerate(node.output):
            defs = producers.get(name, [])
            constants = all(graph.node[d].op_type == "Constant" and
                            graph.node[d].domain in ("", "ai.onnx")
                            for d in defs)
            if len(defs) < 2 or i == (defs[-1] if constants else defs[0]):
                continue
            k = 1
            while f"{name}_{k}" in taken:
                k += 1
            node.output[j] = f"{name}_{k}"
            taken.add(node.output[j])
            if not constants:
                current[name] = node.output[j]
            renamed += 1
    return renamed


def compare_models(a, b):
    for field in ("ir_version", "producer_name", "producer_version", "domain",
                  "model_version", "doc_string"):
        expect(getattr(a, field) == getattr(b, field),
               f"{field} {getattr(a, field)!r} != {getattr(b, field)!r}")
    expect({(o.domain, o.version) for o in a.opset_import} ==
           {(o.domain, o.version) for o in b.opset_import}, "opset imports")
    expect([(p.key, p.value) for p in a.metadata_props] ==
           [(p.key, p.value) for p in b.metadata_props], "metadata_props")
    compare_graph(a.graph, b.graph, "graph")


def summary(m):
    def count(g):
        n = len(g.node)
        for node in g.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    n += count(attr.g)
        return n
    return (f"{count(m.graph)} nodes, {len(m.graph.initializer)} "
            f"initializers")


def round_trip(amp_opt, dirs):
    files = sorted({f for d in dirs for f in
                    glob.glob(os.path.join(d, "**", "*.onnx"), recursive=True)})
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            out = os.path.join(tmp, "out.onnx")
            rel = os.path.relpath(path, os.path.commonpath(dirs))
            proc = subprocess.run([amp_opt, path, "-o", out],
                                  capture_output=True, text=True)
            try:
                expect(proc.returncode == 0,
                       "amp-opt failed: " +
                       (proc.stderr.strip().splitlines() or ["?"])[0])
                a = onnx.load(path)
                # Names defined twice are written renamed (with a warning).
                renamed = rename_redefinitions(a.graph)
                compare_models(a, onnx.load(out))
                print(f"PASS {rel}: {summary(a)}" +
                      (f", {renamed} redefined names renamed" if renamed
                       else ""))
            except Mismatch as e:
                failures += 1
                print(f"FAIL {rel}: {e}")
            if os.path.exists(out):
                os.remove(out)
    print(f"round-tripped {len(files) - failures} of {len(files)} files "
          f"losslessly")
    return 1 if failures or not files else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "--round-trip":
        return round_trip(argv[1], argv[2:])
    if len(argv) == 2:
        try:
            compare_models(onnx.load(argv[0]), onnx.load(argv[1]))
        except Mismatch as e:
            print(f"mismatch: {e}")
            return 1
        print("identical")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
