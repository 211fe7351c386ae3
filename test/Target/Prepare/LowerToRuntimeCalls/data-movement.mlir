// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Data movement becomes hpsrt.concat (each input's shape), hpsrt.split,
// hpsrt.slice (ONNX's starts, steps and axes made per-axis and clamped as
// the runtime reads them), hpsrt.transpose, hpsrt.expand and hpsrt.pad (its
// value an f64 whatever the element type), with negative axes normalized.
// Views, which run no kernel, stay as they are, as do stage inputs and
// outputs (hps.recv, hps.send), weights and static shapes.

// CHECK-LABEL: func.func @stage_0
func.func @stage_0(%a: tensor<2x3x8xf32>, %b: tensor<2x2x8xf32>, %e: tensor<3x1xf32>, %i: tensor<2x3xi32>) -> (tensor<2x5x8xf32>, tensor<2x3x1xf32>, tensor<2x3x7xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<8x2x3xf32>, tensor<2x3x4xf32>, tensor<2x4x11xf32>, tensor<2x5xi32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // Axis -2 is 1.
  // CHECK-NEXT: %[[CAT:.*]] = "hpsrt.concat"(%arg0, %arg1) <{axis = 1 : i64, inputs = [array<i64: 2, 3, 8>, array<i64: 2, 2, 8>], type = f32}> : (tensor<2x3x8xf32>, tensor<2x2x8xf32>) -> tensor<2x5x8xf32>
  %cat = hps.concat %a, %b {axis = -2 : i64} : (tensor<2x3x8xf32>, tensor<2x2x8xf32>) -> tensor<2x5x8xf32>
  // CHECK-NEXT: %[[S:.*]]:2 = "hpsrt.split"(%arg0) <{axis = 2 : i64, sizes = array<i64: 1, 7>, type = f32, x = array<i64: 2, 3, 8>}> : (tensor<2x3x8xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x7xf32>)
  %s:2 = hps.split %a {axis = -1 : i64, sizes = array<i64: 1, 7>} : (tensor<2x3x8xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x7xf32>)
  // Start -3 of axis -1 (8 long) is 5; the other axes start at 0, step 1.
  // CHECK-NEXT: %[[SL:.*]] = "hpsrt.slice"(%arg0) <{starts = array<i64: 0, 0, 5>, steps = array<i64: 1, 1, 1>, type = f32, x = array<i64: 2, 3, 8>, y = array<i64: 2, 3, 3>}> : (tensor<2x3x8xf32>) -> tensor<2x3x3xf32>
  %sl = hps.slice %a {starts = array<i64: -3>, ends = array<i64: 100>, axes = array<i64: -1>, steps = array<i64: 1>} : (tensor<2x3x8xf32>) -> tensor<2x3x3xf32>
  // A backward step: start 10 clamps to the last element, 2.
  // CHECK-NEXT: %[[SL2:.*]] = "hpsrt.slice"(%arg0) <{starts = array<i64: 0, 2, 1>, steps = array<i64: 1, -1, 3>, type = f32, x = array<i64: 2, 3, 8>, y = array<i64: 2, 3, 3>}> : (tensor<2x3x8xf32>) -> tensor<2x3x3xf32>
  %sl2 = hps.slice %a {starts = array<i64: 10, 1>, ends = array<i64: -100, 8>, axes = array<i64: 1, 2>, steps = array<i64: -1, 3>} : (tensor<2x3x8xf32>) -> tensor<2x3x3xf32>
  // CHECK-NEXT: %[[TR:.*]] = "hpsrt.transpose"(%arg0) <{perm = array<i64: 2, 0, 1>, type = f32, x = array<i64: 2, 3, 8>}> : (tensor<2x3x8xf32>) -> tensor<8x2x3xf32>
  %tr = hps.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<2x3x8xf32>) -> tensor<8x2x3xf32>
  // CHECK-NEXT: %[[EX:.*]] = "hpsrt.expand"(%arg2) <{type = f32, x = array<i64: 3, 1>, y = array<i64: 2, 3, 4>}> : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %ex = hps.expand %e {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %[[PD:.*]] = "hpsrt.pad"(%arg0) <{mode = #hpsrt.pad_mode<Reflect>, pads = array<i64: 0, 1, 0, 0, 0, 3>, type = f32, value = 1.500000e+00 : f64, x = array<i64: 2, 3, 8>}> : (tensor<2x3x8xf32>) -> tensor<2x4x11xf32>
  %pd = hps.pad %a {mode = #hps<pad_mode reflect>, pads = array<i64: 0, 1, 0, 0, 0, 3>, value = 1.5 : f32} : (tensor<2x3x8xf32>) -> tensor<2x4x11xf32>
  // An integer fill value.
  // CHECK-NEXT: %[[PI:.*]] = "hpsrt.pad"(%arg3) <{mode = #hpsrt.pad_mode<Constant>, pads = array<i64: 0, 1, 0, 1>, type = i32, value = 7.000000e+00 : f64, x = array<i64: 2, 3>}> : (tensor<2x3xi32>) -> tensor<2x5xi32>
  %pi = hps.pad %i {mode = #hps<pad_mode constant>, pads = array<i64: 0, 1, 0, 1>, value = 7 : i32} : (tensor<2x3xi32>) -> tensor<2x5xi32>
  // CHECK-NEXT: return %[[CAT]], %[[S]]#0, %[[S]]#1, %[[SL]], %[[SL2]], %[[TR]], %[[EX]], %[[PD]], %[[PI]]
  return %cat, %s#0, %s#1, %sl, %sl2, %tr, %ex, %pd, %pi : tensor<2x5x8xf32>, tensor<2x3x1xf32>, tensor<2x3x7xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<8x2x3xf32>, tensor<2x3x4xf32>, tensor<2x4x11xf32>, tensor<2x5xi32>
}

// Views, stage inputs and outputs, weights and shapes run no kernel: only
// the relu between them is lowered.
// CHECK-LABEL: func.func @stays
func.func @stays() attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[X:.*]] = hps.recv "in" : tensor<2x6x1x1xf32>
  %x = hps.recv "in" : tensor<2x6x1x1xf32>
  // CHECK-NEXT: %[[W:.*]] = hps.weight "w"
  %w = hps.weight "w" dense<1.0> : tensor<2x6xf32>
  // CHECK-NEXT: %[[F:.*]] = hps.flatten %[[X]]
  %f = hps.flatten %x {axis = 1 : i64} : (tensor<2x6x1x1xf32>) -> tensor<2x6xf32>
  // CHECK-NEXT: %[[R:.*]] = "hpsrt.unary"(%[[F]]) <{kind = #hpsrt.unary_kind<Relu>
  %r = hps.relu %f : tensor<2x6xf32>
  // CHECK-NEXT: %[[RS:.*]] = hps.reshape %[[R]]
  %rs = hps.reshape %r {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %[[U:.*]] = hps.unsqueeze %[[RS]]
  %u = hps.unsqueeze %rs {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  // CHECK-NEXT: %[[SQ:.*]] = hps.squeeze %[[U]]
  %sq = hps.squeeze %u {axes = array<i64: 0>} : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %[[SH:.*]] = hps.shape %[[SQ]]
  %sh = hps.shape %sq : (tensor<3x4xf32>) -> tensor<2xi64>
  // CHECK-NEXT: hps.send %[[SQ]] to "out"
  // CHECK-NEXT: hps.send %[[SH]] to "shape"
  // CHECK-NEXT: hps.send %[[W]] to "w"
  hps.send %sq to "out" : tensor<3x4xf32>
  hps.send %sh to "shape" : tensor<2xi64>
  hps.send %w to "w" : tensor<2x6xf32>
  // CHECK-NEXT: return
  return
}
