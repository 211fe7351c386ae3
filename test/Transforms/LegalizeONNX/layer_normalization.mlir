// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// LayerNormalization 17: axis defaults to -1, epsilon to 1e-5; the bias is
// optional.
// CHECK-LABEL: func @layer_norm
func.func @layer_norm(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %g2: tensor<5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  // CHECK: hps.layer_norm %arg0, %arg1, %arg2 {device = #hps.device<"gpu.0">} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %0 = hps.onnx_node "LayerNormalization"(%x, %g, %b) {attrs = {}, domain = "", opset = 17 : i64, device = #hps.device<"gpu.0">} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // CHECK: hps.layer_norm %arg0, %arg3 {axis = 1 : i64} : (tensor<2x5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
  %1 = hps.onnx_node "LayerNormalization"(%x, %g2) {attrs = {axis = 1 : i64, epsilon = 1.0e-5 : f32, stash_type = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
  // Unused Mean and InvStdDev outputs are fine.
  // CHECK: hps.layer_norm %arg0, %arg1 {epsilon = 1.000000e-03 : f32} : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %n = hps.none
  %2:3 = hps.onnx_node "LayerNormalization"(%x, %g, %n) {attrs = {epsilon = 1.0e-3 : f32}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>, none) -> (tensor<2x5x8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  return %0, %1, %2#0 : tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
}

// -----

// Read Mean and InvStdDev outputs are rebuilt from reductions over the
// normalized axes: mean(x) and 1 / sqrt(mean((x - mean)^2) + epsilon).
// CHECK-LABEL: func @statistics
func.func @statistics(%x: tensor<2x5x8xf32>, %g: tensor<5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  // CHECK: %[[Y:.*]] = hps.layer_norm %arg0, %arg1 {axis = 1 : i64, epsilon = 1.000000e-03 : f32}
  // CHECK: %[[MEAN:.*]] = hps.reduce  mean %arg0 {axes = array<i64: 1, 2>, keepdims} : (tensor<2x5x8xf32>) -> tensor<2x1x1xf32>
  // CHECK: %[[DEV:.*]] = hps.sub %arg0, %[[MEAN]]
  // CHECK: %[[SQ:.*]] = hps.mul %[[DEV]], %[[DEV]]
  // CHECK: %[[VAR:.*]] = hps.reduce  mean %[[SQ]] {axes = array<i64: 1, 2>, keepdims}
  // CHECK: %[[SHIFT:.*]] = hps.add %[[VAR]], %{{.*}} : tensor<2x1x1xf32>, tensor<f32>
  // CHECK: %[[STD:.*]] = hps.sqrt %[[SHIFT]]
  // CHECK: %[[INV:.*]] = hps.reciprocal %[[STD]]
  // CHECK: return %[[Y]], %[[MEAN]], %[[INV]]
  %0:3 = hps.onnx_node "LayerNormalization"(%x, %g) {attrs = {axis = -2 : i64, epsilon = 1.0e-3 : f32}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x5x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// -----

// Stay generic: statistics of a dynamic input, statistics in another
// precision (stash_type), an axis out of range, and opsets before 17.
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>, %d: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x1xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  // CHECK: hps.onnx_node "LayerNormalization"{{.*}}axis = -1
  %0:2 = hps.onnx_node "LayerNormalization"(%d, %g) {attrs = {axis = -1 : i64}, domain = "", opset = 17 : i64} : (tensor<?x8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x1xf32>)
  // CHECK: hps.onnx_node "LayerNormalization"{{.*}}stash_type = 10
  %1 = hps.onnx_node "LayerNormalization"(%x, %g) {attrs = {stash_type = 10 : i64}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // CHECK: hps.onnx_node "LayerNormalization"{{.*}}axis = 3
  %2 = hps.onnx_node "LayerNormalization"(%x, %g) {attrs = {axis = 3 : i64}, domain = "", opset = 17 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // CHECK: hps.onnx_node "LayerNormalization"{{.*}}opset = 16
  %3 = hps.onnx_node "LayerNormalization"(%x, %g) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // CHECK-NOT: hps.layer_norm
  return %0#0, %0#1, %1, %2, %3 : tensor<?x8xf32>, tensor<?x1xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
}
