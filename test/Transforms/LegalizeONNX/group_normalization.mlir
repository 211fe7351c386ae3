// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// GroupNormalization (18): layer_norm over [N, G, C/G * spatial], then the
// per-group scale and bias [G] (opset 18's shapes), back to X's shape.
// CHECK-LABEL: func @group_norm
func.func @group_norm(%x: tensor<2x6x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x6x4xf32> {
  // CHECK: %[[ONES:.*]] = hps.constant dense<1.000000e+00> : tensor<8xf32>
  // CHECK: %[[ROWS:.*]] = hps.reshape %arg0 {shape = array<i64: 2, 3, 8>}
  // CHECK: %[[N:.*]] = hps.layer_norm %[[ROWS]], %[[ONES]] {axis = 2 : i64, epsilon = 1.000000e-03 : f32}
  // CHECK: %[[S:.*]] = hps.reshape %arg1 {shape = array<i64: 3, 1>}
  // CHECK: %[[M:.*]] = hps.mul %[[N]], %[[S]] : tensor<2x3x8xf32>, tensor<3x1xf32> -> tensor<2x3x8xf32>
  // CHECK: %[[B:.*]] = hps.reshape %arg2 {shape = array<i64: 3, 1>}
  // CHECK: %[[A:.*]] = hps.add %[[M]], %[[B]]
  // CHECK: hps.reshape %[[A]] {shape = array<i64: 2, 6, 4>}
  %0 = hps.onnx_node "GroupNormalization"(%x, %s, %b) {attrs = {num_groups = 3 : i64, epsilon = 1.0e-3 : f32}, domain = "", opset = 18 : i64} : (tensor<2x6x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

// Per-channel scale and bias are opset 21's: at 18 the node stays generic.
// CHECK-LABEL: func @group_norm_per_channel
func.func @group_norm_per_channel(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x4xf32> {
  // CHECK: hps.onnx_node "GroupNormalization"
  %0 = hps.onnx_node "GroupNormalization"(%x, %s, %b) {attrs = {num_groups = 3 : i64}, domain = "", opset = 18 : i64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

// GroupNormalization-21: the same normalization over [N, G, C/G x spatial],
// then scale and bias per channel, reshaped to [C, 1], in X's shape.
// CHECK-LABEL: func @group_norm_21
func.func @group_norm_21(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x4xf32> {
  // CHECK: %[[V:.*]] = hps.reshape %arg0 {shape = array<i64: 2, 3, 8>}
  // CHECK: %[[N:.*]] = hps.layer_norm %[[V]]
  // CHECK-DAG: %[[S:.*]] = hps.reshape %arg1 {shape = array<i64: 6, 1>}
  // CHECK-DAG: %[[B:.*]] = hps.reshape %[[N]] {shape = array<i64: 2, 6, 4>}
  // CHECK: %[[M:.*]] = hps.mul %[[B]], %[[S]]
  // CHECK: %[[C:.*]] = hps.reshape %arg2 {shape = array<i64: 6, 1>}
  // CHECK: %[[A:.*]] = hps.add %[[M]], %[[C]]
  // CHECK: return %[[A]]
  %0 = hps.onnx_node "GroupNormalization"(%x, %s, %b) {attrs = {num_groups = 3 : i64, stash_type = 1 : i64}, domain = "", opset = 21 : i64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

// At 21, a per-group scale (the 18 form) or another stash_type stays generic.
// CHECK-LABEL: func @group_norm_21_generic
func.func @group_norm_21_generic(%x: tensor<2x6x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %s6: tensor<6xf32>, %b6: tensor<6xf32>) -> (tensor<2x6x4xf32>, tensor<2x6x4xf32>) {
  // CHECK: hps.onnx_node "GroupNormalization"
  // CHECK: hps.onnx_node "GroupNormalization"
  %0 = hps.onnx_node "GroupNormalization"(%x, %s, %b) {attrs = {num_groups = 3 : i64}, domain = "", opset = 21 : i64} : (tensor<2x6x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x6x4xf32>
  %1 = hps.onnx_node "GroupNormalization"(%x, %s6, %b6) {attrs = {num_groups = 3 : i64, stash_type = 0 : i64}, domain = "", opset = 21 : i64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  return %0, %1 : tensor<2x6x4xf32>, tensor<2x6x4xf32>
}
