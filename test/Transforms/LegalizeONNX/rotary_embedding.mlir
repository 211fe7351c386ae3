// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// RotaryEmbedding (23) of a 3-D X with 2 heads of 4: X viewed as [B, S, H,
// D]; the angles gathered at position_ids, one per (sample, position),
// broadcast over the heads; halves rotated: (x1 cos - x2 sin, x1 sin + x2
// cos).
// CHECK-LABEL: func @rotary_3d_positions
func.func @rotary_3d_positions(%x: tensor<1x6x8xf32>, %c: tensor<10x2xf32>, %s: tensor<10x2xf32>, %p: tensor<1x6xi64>) -> tensor<1x6x8xf32> {
  // CHECK: %[[X:.*]] = hps.reshape %arg0 {shape = array<i64: 1, 6, 2, 4>}
  // CHECK: %[[COS:.*]] = hps.gather %arg1, %arg3 : (tensor<10x2xf32>, tensor<1x6xi64>) -> tensor<1x6x2xf32>
  // CHECK: %[[SIN:.*]] = hps.gather %arg2, %arg3
  // CHECK: %[[C:.*]] = hps.reshape %[[COS]] {shape = array<i64: 1, 6, 1, 2>}
  // CHECK: %[[S:.*]] = hps.reshape %[[SIN]] {shape = array<i64: 1, 6, 1, 2>}
  // CHECK: %[[X1:.*]] = hps.slice %[[X]] {axes = array<i64: 3>, ends = array<i64: 2>, starts = array<i64: 0>, steps = array<i64: 1>}
  // CHECK: %[[X2:.*]] = hps.slice %[[X]] {axes = array<i64: 3>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>}
  // CHECK: %[[SX2:.*]] = hps.mul %[[S]], %[[X2]]
  // CHECK: %[[CX1:.*]] = hps.mul %[[C]], %[[X1]]
  // CHECK: %[[REAL:.*]] = hps.sub %[[CX1]], %[[SX2]]
  // CHECK: %[[CX2:.*]] = hps.mul %[[C]], %[[X2]]
  // CHECK: %[[SX1:.*]] = hps.mul %[[S]], %[[X1]]
  // CHECK: %[[IMAG:.*]] = hps.add %[[SX1]], %[[CX2]]
  // CHECK: %[[R:.*]] = hps.concat %[[REAL]], %[[IMAG]] {axis = 3 : i64}
  // CHECK: hps.reshape %[[R]] {shape = array<i64: 1, 6, 8>}
  %0 = hps.onnx_node "RotaryEmbedding"(%x, %c, %s, %p) {attrs = {num_heads = 2 : i64}, domain = "", opset = 23 : i64} : (tensor<1x6x8xf32>, tensor<10x2xf32>, tensor<10x2xf32>, tensor<1x6xi64>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

// 4-D X, interleaved, the first 4 of 8 features rotated: even and odd
// features are the pairs, re-interleaved through a [..., 2, 2] view; the
// other 4 pass through. Caches already per (sample, position).
// CHECK-LABEL: func @rotary_4d_partial_interleaved
func.func @rotary_4d_partial_interleaved(%x: tensor<1x2x3x8xf32>, %c: tensor<1x3x2xf32>, %s: tensor<1x3x2xf32>) -> tensor<1x2x3x8xf32> {
  // CHECK: %[[X:.*]] = hps.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
  // CHECK-DAG: %[[EVEN:.*]] = hps.slice %[[X]] {axes = array<i64: 3>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 2>}
  // CHECK-DAG: %[[ODD:.*]] = hps.slice %[[X]] {axes = array<i64: 3>, ends = array<i64: 4>, starts = array<i64: 1>, steps = array<i64: 2>}
  // CHECK: hps.concat {{.*}} {axis = 4 : i64} : (tensor<1x3x2x2x1xf32>, tensor<1x3x2x2x1xf32>) -> tensor<1x3x2x2x2xf32>
  // CHECK: %[[PASS:.*]] = hps.slice %[[X]] {axes = array<i64: 3>, ends = array<i64: 8>, starts = array<i64: 4>, steps = array<i64: 1>}
  // CHECK: %[[ALL:.*]] = hps.concat {{.*}}, %[[PASS]] {axis = 3 : i64}
  // CHECK: hps.transpose %[[ALL]] {perm = array<i64: 0, 2, 1, 3>}
  %0 = hps.onnx_node "RotaryEmbedding"(%x, %c, %s) {attrs = {interleaved = 1 : i64, rotary_embedding_dim = 4 : i64}, domain = "", opset = 23 : i64} : (tensor<1x2x3x8xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// Stays generic: an odd rotary dimension; caches that do not match the
// half dimension; a 3-D X without num_heads.
// CHECK-LABEL: func @rotary_generic
func.func @rotary_generic(%x: tensor<1x2x3x8xf32>, %c: tensor<1x3x4xf32>, %c3: tensor<1x3x3xf32>, %x3: tensor<1x3x8xf32>) -> (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x3x8xf32>) {
  // CHECK-COUNT-3: hps.onnx_node "RotaryEmbedding"
  %0 = hps.onnx_node "RotaryEmbedding"(%x, %c, %c) {attrs = {rotary_embedding_dim = 7 : i64}, domain = "", opset = 23 : i64} : (tensor<1x2x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x2x3x8xf32>
  %1 = hps.onnx_node "RotaryEmbedding"(%x, %c3, %c3) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<1x2x3x8xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>) -> tensor<1x2x3x8xf32>
  %2 = hps.onnx_node "RotaryEmbedding"(%x3, %c, %c) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<1x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x8xf32>
  return %0, %1, %2 : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x3x8xf32>
}
