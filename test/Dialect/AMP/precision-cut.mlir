// The min-cut of assign=optimal against exhaustive enumeration of every
// labeling, on random problems of up to 16 ops with random times, pins and
// shared casts: the same optimum, pins kept, ties broken toward FP32.
// RUN: amp-opt %s --test-amp-precision-cut -o /dev/null | FileCheck %s
// RUN: amp-opt %s --test-amp-precision-cut="seed=2 graphs=2000" -o /dev/null | FileCheck %s
// RUN: amp-opt %s --test-amp-precision-cut="seed=3 max-ops=4" -o /dev/null | FileCheck %s --check-prefix=SMALL

// CHECK: test-amp-precision-cut: {{[0-9]+}} problems of up to 16 ops: every cut is optimal; {{[1-9][0-9]*}} mix FP32 and low ops, {{[1-9][0-9]*}} have tied optima
// SMALL: problems of up to 4 ops: every cut is optimal
module {}
