// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// ArgMax / ArgMin (6-17) on f32: the extreme kept along the axis, the
// positions that equal it take their index from a float iota (the others
// the extent, or -1 with select_last_index), and the min (max) of those is
// cast to i64; where none equals it (a NaN extreme), 0.
// CHECK-LABEL: func @argmax
func.func @argmax(%x: tensor<2x3xf32>) -> (tensor<2xi64>, tensor<1x3xi64>) {
  // CHECK-DAG: %[[IOTA:.*]] = hps.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00]]> : tensor<1x3xf32>
  // CHECK-DAG: %[[MISS:.*]] = hps.constant dense<3.000000e+00> : tensor<f32>
  // CHECK: %[[M:.*]] = hps.reduce max %arg0 {axes = array<i64: 1>, keepdims} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK: %[[E:.*]] = hps.equal %arg0, %[[M]]
  // CHECK: %[[W:.*]] = hps.where %[[E]], %[[IOTA]], %[[MISS]]
  // CHECK: %[[I:.*]] = hps.reduce min %[[W]] {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  // CHECK: %[[MISSED:.*]] = hps.greater_equal %[[I]], %[[MISS]]
  // CHECK: %[[J:.*]] = hps.where %[[MISSED]], %{{.*}}, %[[I]]
  // CHECK: %[[A:.*]] = hps.cast %[[J]] : (tensor<2xf32>) -> tensor<2xi64>
  %0 = hps.onnx_node "ArgMax"(%x) {attrs = {axis = 1 : i64, keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  // CHECK: hps.reduce min %arg0 {axes = array<i64: 0>, keepdims}
  // CHECK: %[[L:.*]] = hps.reduce max {{.*}} {axes = array<i64: 0>, keepdims} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  // CHECK: %[[BELOW:.*]] = hps.less %[[L]]
  // CHECK: %[[K:.*]] = hps.where %[[BELOW]], %{{.*}}, %[[L]]
  // CHECK: %[[B:.*]] = hps.cast %[[K]] : (tensor<1x3xf32>) -> tensor<1x3xi64>
  // CHECK: return %[[A]], %[[B]]
  %1 = hps.onnx_node "ArgMin"(%x) {attrs = {select_last_index = 1 : i64}, domain = "", opset = 12 : i64} : (tensor<2x3xf32>) -> tensor<1x3xi64>
  return %0, %1 : tensor<2xi64>, tensor<1x3xi64>
}

// -----

// Stays generic: an integer input (hps.reduce is f32).
// CHECK-LABEL: func @argmax_generic
func.func @argmax_generic(%x: tensor<2x3xi32>) -> tensor<2x1xi64> {
  // CHECK: hps.onnx_node "ArgMax"
  %0 = hps.onnx_node "ArgMax"(%x) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xi32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}
