// RUN: amp-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(amp-host-data-to-kernels))' | FileCheck %s

// A copy becomes a linalg op, for amp-linalg-to-grid-loops to tile.
// CHECK-LABEL: func.func @copy
// CHECK:         linalg.copy ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NOT:     memref.copy
func.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A scatter's loop and the store after it into the same buffer: one run,
// one loop over one point (a grid of one thread once tiled). The constants
// they use stay outside (kernel outlining clones them).
// CHECK-LABEL: func.func @scatter
// CHECK:         arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.parallel (%{{.*}}) = (%[[ZERO]]) to (%[[ONE]]) step (%[[ONE]])
// CHECK-NEXT:      scf.for
// CHECK:             memref.load
// CHECK:             memref.store
// CHECK:           memref.store
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @scatter(%index: memref<8xindex>, %out: memref<8x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %j = memref.load %index[%i] : memref<8xindex>
    memref.store %one, %out[%i, %j] : memref<8x10xf32>
  }
  memref.store %one, %out[%c0, %c0] : memref<8x10xf32>
  return
}

// -----

// An op that holds a linalg op stays on the host; its region's runs move.
// CHECK-LABEL: func.func @nested
// CHECK:         scf.if
// CHECK-NEXT:      linalg.fill
// CHECK:           scf.parallel
// CHECK-NEXT:        memref.store
func.func @nested(%flag: i1, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  scf.if %flag {
    linalg.fill ins(%one : f32) outs(%out : memref<4xf32>)
    memref.store %one, %out[%c0] : memref<4xf32>
  }
  return
}

// -----

// A load whose value the host uses cannot move: it stays, with a warning.
// CHECK-LABEL: func.func @host_uses_value
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    arith.cmpf
func.func @host_uses_value(%in: memref<4xf32>) -> i1 {
  %c0 = arith.constant 0 : index
  // expected-warning @+1 {{reads or writes buffers on the host, which uses its results: the step's buffers must be host-accessible (CUDA managed memory)}}
  %x = memref.load %in[%c0] : memref<4xf32>
  %positive = arith.cmpf ogt, %x, %x : f32
  return %positive : i1
}

// -----

// The load feeds a loop that stays on the host: the load stays with it, so
// no host op takes a value from inside a kernel.
// CHECK-LABEL: func.func @feeds_host_op
// CHECK:         %[[FIRST:.*]] = memref.load
// CHECK-NEXT:    scf.for {{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK-NOT:     scf.parallel
func.func @feeds_host_op(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-warning @+1 {{reads or writes buffers on the host, which uses its results}}
  %first = memref.load %in[%c0] : memref<4xf32>
  // expected-warning @+1 {{reads or writes buffers on the host, which uses its results}}
  %sum = scf.for %i = %c1 to %c4 step %c1 iter_args(%acc = %first) -> f32 {
    %x = memref.load %in[%i] : memref<4xf32>
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  %twice = arith.addf %sum, %sum : f32
  return %twice : f32
}

// -----

// FP8's scale update: the reads and the arithmetic on them sink past the
// kernel that writes another buffer, to the store that uses them: one
// grid, nothing left on the host.
// CHECK-LABEL: func.func @reads_sink_to_their_use
// CHECK:         linalg.fill
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.load %arg0[]
// CHECK-NEXT:      arith.cmpf
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      memref.load %arg1[]
// CHECK-NEXT:      arith.select
// CHECK-NEXT:      memref.store
// CHECK-NEXT:      scf.reduce
func.func @reads_sink_to_their_use(%amax: memref<f32>, %scale: memref<f32>,
                                   %history: memref<4xf32>,
                                   %new_scale: memref<f32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %a = memref.load %amax[] : memref<f32>
  %s = memref.load %scale[] : memref<f32>
  %inverse = arith.divf %one, %a : f32
  %valid = arith.cmpf ogt, %a, %zero : f32
  linalg.fill ins(%zero : f32) outs(%history : memref<4xf32>)
  %next = arith.select %valid, %inverse, %s : f32
  memref.store %next, %new_scale[] : memref<f32>
  return
}

// -----

// FP8's end of step: one scale's update, then the next one's amax written
// into its history. They share no buffer and no value: two loops, which
// amp-linalg-to-grid-loops runs each with the work it is independent of.
// CHECK-LABEL: func.func @independent_parts
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.load %arg0[]
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      memref.store %{{.*}}, %arg1[]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.load %arg2[]
// CHECK-NEXT:      memref.store %{{.*}}, %arg3[%{{.*}}]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @independent_parts(%amax: memref<f32>, %scale: memref<f32>,
                             %next_amax: memref<f32>,
                             %next_history: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %a = memref.load %amax[] : memref<f32>
  %inverse = arith.divf %one, %a : f32
  memref.store %inverse, %scale[] : memref<f32>
  %b = memref.load %next_amax[] : memref<f32>
  memref.store %b, %next_history[%c0] : memref<4xf32>
  return
}

// -----

// One part: the second store reads what the first writes.
// CHECK-LABEL: func.func @dependent_through_memory
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.load %arg0[]
// CHECK-NEXT:      memref.store %{{.*}}, %arg1[]
// CHECK-NEXT:      memref.load %arg1[]
// CHECK-NEXT:      memref.store %{{.*}}, %arg2[]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @dependent_through_memory(%in: memref<f32>, %middle: memref<f32>,
                                    %out: memref<f32>) {
  %a = memref.load %in[] : memref<f32>
  memref.store %a, %middle[] : memref<f32>
  %b = memref.load %middle[] : memref<f32>
  memref.store %b, %out[] : memref<f32>
  return
}

// -----

// A read does not sink past a kernel that writes its buffer: it keeps its
// value from before, on the host.
// CHECK-LABEL: func.func @read_before_write_stays
// CHECK:         memref.load
// CHECK-NEXT:    linalg.fill
func.func @read_before_write_stays(%amax: memref<f32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  // expected-warning @+1 {{reads or writes buffers on the host, which uses its results}}
  %a = memref.load %amax[] : memref<f32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  memref.store %a, %out[] : memref<f32>
  return
}

// -----

// A parallel loop from amp-parallelize-loop-nests is a kernel to be: its
// loads and stores stay in it, not in a grid of their own.
// CHECK-LABEL: func.func @parallel_loop_stays_whole
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK-NEXT:      %[[V:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK-NEXT:      memref.store %[[V]], %{{.*}}[%[[I]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @parallel_loop_stays_whole(%in: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %in[%i] : memref<8xf32>
    memref.store %v, %out[%i] : memref<8xf32>
  }
  return
}
