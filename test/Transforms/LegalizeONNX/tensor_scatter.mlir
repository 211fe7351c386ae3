// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// TensorScatter (24) without write_indices: the update, then the cache's
// tail.
// CHECK-LABEL: func @tensor_scatter_prefill
func.func @tensor_scatter_prefill(%c: tensor<2x8x4xf32>, %u: tensor<2x2x4xf32>) -> tensor<2x8x4xf32> {
  // CHECK: %[[TAIL:.*]] = hps.slice %arg0 {axes = array<i64: 1>, ends = array<i64: 8>, starts = array<i64: 2>, steps = array<i64: 1>}
  // CHECK: hps.concat %arg1, %[[TAIL]] {axis = 1 : i64}
  %0 = hps.onnx_node "TensorScatter"(%c, %u) {attrs = {}, domain = "", opset = 24 : i64} : (tensor<2x8x4xf32>, tensor<2x2x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Circular write_indices known at run time: per sample, cache position p
// takes update position (p - w[b]) mod 8 where that is below 2, and keeps
// the cache elsewhere.
// CHECK-LABEL: func @tensor_scatter_circular
func.func @tensor_scatter_circular(%c: tensor<2x8x4xf32>, %u: tensor<2x2x4xf32>, %w: tensor<2xi64>) -> tensor<2x8x4xf32> {
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0> : tensor<i64>
  // CHECK-DAG: %[[LEN:.*]] = hps.constant dense<2> : tensor<i64>
  // CHECK-DAG: %[[CAP:.*]] = hps.constant dense<8> : tensor<i64>
  // CHECK-DAG: %[[POS:.*]] = hps.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  // CHECK: %[[W0:.*]] = hps.slice %arg2 {axes = array<i64: 0>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK: %[[D:.*]] = hps.sub %[[POS]], %[[W0]]
  // CHECK: %[[M:.*]] = hps.mod %[[D]], %[[CAP]]
  // CHECK: %[[VALID:.*]] = hps.less %[[M]], %[[LEN]]
  // CHECK: %[[IDX:.*]] = hps.where %[[VALID]], %[[M]], %[[ZERO]]
  // CHECK: %[[U0:.*]] = hps.slice %arg1 {axes = array<i64: 0>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK: %[[G:.*]] = hps.gather %[[U0]], %[[IDX]] {axis = 1 : i64} : (tensor<1x2x4xf32>, tensor<8xi64>) -> tensor<1x8x4xf32>
  // CHECK: %[[C0:.*]] = hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK: %[[V:.*]] = hps.reshape %[[VALID]] {shape = array<i64: 1, 8, 1>}
  // CHECK: %[[S0:.*]] = hps.where %[[V]], %[[G]], %[[C0]]
  // CHECK: %[[S1:.*]] = hps.where {{.*}} : (tensor<1x8x1xi1>, tensor<1x8x4xf32>, tensor<1x8x4xf32>)
  // CHECK: hps.concat %[[S0]], %[[S1]] {axis = 0 : i64}
  %0 = hps.onnx_node "TensorScatter"(%c, %u, %w) {attrs = {mode = "circular"}, domain = "", opset = 24 : i64} : (tensor<2x8x4xf32>, tensor<2x2x4xf32>, tensor<2xi64>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Linear mode also needs p - w[b] >= 0.
// CHECK-LABEL: func @tensor_scatter_linear
func.func @tensor_scatter_linear(%c: tensor<1x8x4xf32>, %u: tensor<1x2x4xf32>, %w: tensor<1xi64>) -> tensor<1x8x4xf32> {
  // CHECK: %[[BELOW:.*]] = hps.less
  // CHECK: %[[ABOVE:.*]] = hps.greater_equal
  // CHECK: hps.and %[[BELOW]], %[[ABOVE]]
  // CHECK-NOT: hps.concat
  %0 = hps.onnx_node "TensorScatter"(%c, %u, %w) {attrs = {axis = 1 : i64}, domain = "", opset = 24 : i64} : (tensor<1x8x4xf32>, tensor<1x2x4xf32>, tensor<1xi64>) -> tensor<1x8x4xf32>
  return %0 : tensor<1x8x4xf32>
}

// -----

// Stays generic: axis 0 (the batch), an unknown mode, an update longer
// than the cache.
// CHECK-LABEL: func @tensor_scatter_generic
func.func @tensor_scatter_generic(%c: tensor<2x8x4xf32>, %u: tensor<2x2x4xf32>, %l: tensor<2x9x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  // CHECK-COUNT-3: hps.onnx_node "TensorScatter"
  %0 = hps.onnx_node "TensorScatter"(%c, %u) {attrs = {axis = 0 : i64}, domain = "", opset = 24 : i64} : (tensor<2x8x4xf32>, tensor<2x2x4xf32>) -> tensor<2x8x4xf32>
  %1 = hps.onnx_node "TensorScatter"(%c, %u) {attrs = {mode = "ring"}, domain = "", opset = 24 : i64} : (tensor<2x8x4xf32>, tensor<2x2x4xf32>) -> tensor<2x8x4xf32>
  %2 = hps.onnx_node "TensorScatter"(%c, %l) {attrs = {}, domain = "", opset = 24 : i64} : (tensor<2x8x4xf32>, tensor<2x9x4xf32>) -> tensor<2x8x4xf32>
  return %0, %1, %2 : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}
