// amp-report summarizes the decisions and casts of a function body.
// RUN: amp-opt %s --amp-report="file=%t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --input-file=%t.json
// RUN: not amp-opt %s --amp-report="device=tpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not amp-opt %s --amp-report="file=%t.missing/r.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRITE
// RUN: amp-opt %S/Inputs/report-dynamic.mlir --amp-report="file=%t.dyn.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GUESS
// RUN: FileCheck %s --input-file=%t.dyn.json --check-prefix=GUESS-JSON
// RUN: amp-opt %S/Inputs/report-dynamic.mlir --amp-report="file=%t.named.json dim=batch:64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: FileCheck %s --input-file=%t.named.json --check-prefix=NAMED-JSON
// RUN: not amp-opt %s --amp-report="dim=:4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-DIM
// RUN: amp-opt %S/Inputs/report-untyped.mlir --amp-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNTYPED

// SUMMARY: amp: 1 of 2 ops in fp16 (98.5% of FLOPs), 2 casts (4 inserted, 1 fused), modeled {{[0-9.]+}} us FP32 -> {{[0-9.]+}} us on h100
// SUMMARY-NOT: no op is faster
// SUMMARY-NOT: keep their types
// Ops that kept their types for want of one are FP32 without a word
// otherwise: the summary counts them, names the first and the op without a
// schema that it reads.
// UNTYPED: amp: 2 ops keep their types because ONNX shape inference could not type their data (the first, 'mm' (MatMul), reads what test.customop::CustomOpOne 'custom' computes): ops without an ONNX schema (other domains, contrib ops that amp-opt does not type) type their outputs only by the file's value_info; they and what they feed stay as they are
// DEVICE: error: amp-report: unknown device 'tpu'; expected h100, a100 or v100
// WRITE: error: amp-report: cannot write '{{.*}}r.json'
// BAD-DIM: error: amp-report: bad dim ':4'; expected <name>:<size> with a positive size

// Estimates that rest on the default size of a dynamic dimension name it,
// per decision and for the whole report, and the summary says how to set it.
// Nothing went low because the cost model kept every GEMM in FP32: the
// summary says so, names the largest, and says how to force them.
// GUESS: amp: no op is faster in low precision on h100 at these sizes: the cost model kept all 1 GEMMs and convolutions in FP32 (the largest, 'mm', 1.31e+05 FLOPs, is bound by kernel launches and casts); force them with op-class=MatMul:always,Gemm:always,Conv:always, or give the real sizes with dim=<name>:<size>
// GUESS: amp: modeled times assume default-dim-size=64 for dims batch, ? (set sizes with dim=<name>:<size>)
// GUESS-JSON:      "guessed_dims": [
// GUESS-JSON-NEXT:   "batch"
// GUESS-JSON-NEXT: ],
// GUESS-JSON-NEXT: "name": "mm",
// GUESS-JSON:      "guessed_dims": [
// GUESS-JSON-NEXT:   "?"
// GUESS-JSON-NEXT: ],
// GUESS-JSON-NEXT: "name": "relu",
// GUESS-JSON:      "guessed_dims": [
// GUESS-JSON-NEXT:   "batch",
// GUESS-JSON-NEXT:   "?"
// GUESS-JSON-NEXT: ],
// GUESS-JSON:      "sizes_guessed": true
// NAMED: modeled times assume default-dim-size=64 for dims ? (set
// NAMED-JSON-NOT: "batch"
// NAMED-JSON:     "name": "mm",
// NAMED-JSON:     "guessed_dims": [
// NAMED-JSON-NEXT:  "?"
// NAMED-JSON-NEXT: ],
// NAMED-JSON-NEXT: "name": "relu",
// NAMED-JSON-NOT: "batch"

// CHECK:      "casts": {
// CHECK-NEXT:   "eliminated": 1,
// CHECK-NEXT:   "fused": 1,
// CHECK-NEXT:   "inserted": 4,
// CHECK-NEXT:   "remaining": 2
// CHECK:        "flops": 32768,
// CHECK-NEXT:   "name": "mm",
// CHECK-NEXT:   "op_type": "MatMul",
// CHECK-NEXT:   "precision": "f16",
// CHECK-NEXT:   "reason": "always-list"
// CHECK:        "flops": 512,
// CHECK-NEXT:   "name": "sm",
// CHECK-NEXT:   "op_type": "Softmax",
// CHECK-NEXT:   "precision": "f32",
// CHECK-NEXT:   "reason": "keep-fp32"
// CHECK:      "flops": {
// CHECK-NEXT:   "low_precision": 32768,
// CHECK-NEXT:   "total": 33280
// The memory planner: inputs 6144 bytes; the FP16 copies (1024 + 2048)
// and the MatMul's result (1024) are live at the MatMul.
// CHECK:      "memory": {
// CHECK-NEXT:   "function": "f",
// CHECK-NEXT:   "input_bytes": 6144,
// CHECK-NEXT:   "peak_at": "mm",
// CHECK-NEXT:   "peak_bytes": 10240,
// CHECK-NEXT:   "peak_holders": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "bytes": 2048,
// CHECK-NEXT:       "name": "amp.cast"
// CHECK-NEXT:     },
// CHECK-NEXT:     {
// CHECK-NEXT:       "bytes": 1024,
// CHECK-NEXT:       "name": "amp.cast"
// CHECK-NEXT:     },
// CHECK-NEXT:     {
// CHECK-NEXT:       "bytes": 1024,
// CHECK-NEXT:       "name": "mm"
// CHECK-NEXT:     }
// CHECK-NEXT:   ]
// CHECK-NEXT: },
// CHECK:      "by_type": {
// CHECK-NEXT:   "MatMul": {
// CHECK-NEXT:     "low_precision": 1,
// CHECK-NEXT:     "total": 1
// CHECK-NEXT:   },
// CHECK-NEXT:   "Softmax": {
// CHECK-NEXT:     "low_precision": 0,
// CHECK-NEXT:     "total": 1
// CHECK-NEXT:   }
// CHECK-NEXT: },
// CHECK-NEXT: "low_precision": 1,
// CHECK-NEXT: "total": 2
// CHECK:      "precision": "fp16",
// CHECK:      "sizes_guessed": false
func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>) -> tensor<16x32xf32>
    attributes {amp.casts_inserted = 4 : i64, amp.casts_fused = 1 : i64} {
  %x16 = amp.cast %x : tensor<16x32xf32> to tensor<16x32xf16>
  %w16 = amp.cast %w : tensor<32x32xf32> to tensor<32x32xf16>
  %m = onnxg.node "MatMul"(%x16, %w16) opset 13
      {amp.precision = f16, amp.reason = "always-list"}
      : (tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<16x32xf16> loc("mm")
  %s = onnxg.node "Softmax"(%m) opset 13
      {amp.precision = f32, amp.reason = "keep-fp32"}
      : (tensor<16x32xf16>) -> tensor<16x32xf32> loc("sm")
  return %s : tensor<16x32xf32>
}
