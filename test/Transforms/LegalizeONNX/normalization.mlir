// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @batch_norm
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 {epsilon = 1.000000e-03 : f32}
  %0 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {epsilon = 1.0e-3 : f32}, domain = "", opset = 9 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // Opset 7: spatial=1 is the same op; spatial=0 (per-element stats) is not.
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 :
  %1 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {spatial = 1 : i64}, domain = "", opset = 7 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // CHECK: hps.onnx_node "BatchNormalization"{{.*}}spatial = 0
  %2 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {spatial = 0 : i64}, domain = "", opset = 8 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // Opset 14+ training mode uses batch statistics: stays generic.
  // CHECK: hps.onnx_node "BatchNormalization"{{.*}}training_mode = 1
  %3 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {training_mode = 1 : i64}, domain = "", opset = 15 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0, %1, %2, %3 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func @layer_norm
func.func @layer_norm(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x1xf32>) {
  // CHECK: hps.layer_norm %arg0, %arg1, %arg2 : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %0 = hps.onnx_node "LayerNormalization"(%x, %g, %b) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // The Mean output read by someone keeps the node generic.
  // CHECK: hps.onnx_node "LayerNormalization"
  %1:2 = hps.onnx_node "LayerNormalization"(%x, %g) {attrs = {axis = -1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x1xf32>)
  return %0, %1#0, %1#1 : tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x1xf32>
}

// -----

// Before opset 13 Softmax coerces to 2-D at `axis` (default 1).
// CHECK-LABEL: func @softmax_coerced
func.func @softmax_coerced(%x: tensor<2x3x4xf32>, %y: tensor<?x10xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<?x10xf32>) {
  // Axis 1 of a 3-D tensor normalizes over 3*4 elements per row.
  // CHECK: %[[F:.*]] = hps.flatten %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: %[[S:.*]] = hps.softmax %[[F]] {axis = 1 : i64} : (tensor<2x12xf32>) -> tensor<2x12xf32>
  // CHECK: hps.reshape %[[S]] {shape = array<i64: 2, 3, 4>} : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Softmax"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // The last axis needs no reshaping (and works with dynamic shapes).
  // CHECK: hps.log_softmax %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = hps.onnx_node "LogSoftmax"(%x) {attrs = {axis = 2 : i64}, domain = "", opset = 9 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.softmax %arg1 : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %2 = hps.onnx_node "Softmax"(%y) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<?x10xf32>
}

// -----

// Opset 13+: one axis, default -1.
// CHECK-LABEL: func @softmax_axis
func.func @softmax_axis(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: hps.softmax %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Softmax"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.log_softmax %arg0 {axis = 1 : i64}
  %1 = hps.onnx_node "LogSoftmax"(%x) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
