// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Axes as an attribute; keepdims defaults to 1; no axes reduces everything.
// CHECK-LABEL: func @attr_axes
func.func @attr_axes(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x1x1xf32>, tensor<2x3xf32>) {
  // CHECK: hps.reduce mean %arg0 {axes = array<i64: 1>, keepdims} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %0 = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: hps.reduce max %arg0 {axes = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = hps.onnx_node "ReduceMax"(%x) {attrs = {axes = array<i64: -2>, keepdims = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK: hps.reduce l2 %arg0 {axes = array<i64>, keepdims} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %2 = hps.onnx_node "ReduceL2"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  // CHECK: hps.reduce sum %arg0 {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %3 = hps.onnx_node "ReduceSum"(%x) {attrs = {axes = array<i64: 2>, keepdims = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x1x1xf32>, tensor<2x3xf32>
}

// -----

// The other kinds.
// CHECK-LABEL: func @kinds
func.func @kinds(%x: tensor<4xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  // CHECK: hps.reduce min
  %0 = hps.onnx_node "ReduceMin"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<1xf32>
  // CHECK: hps.reduce prod
  %1 = hps.onnx_node "ReduceProd"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<1xf32>
  // CHECK: hps.reduce l1
  %2 = hps.onnx_node "ReduceL1"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<1xf32>
  // CHECK: hps.reduce log_sum %
  %3 = hps.onnx_node "ReduceLogSum"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<1xf32>
  // CHECK: hps.reduce log_sum_exp
  %4 = hps.onnx_node "ReduceLogSumExp"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<1xf32>
  // CHECK: hps.reduce sum_square
  %5 = hps.onnx_node "ReduceSumSquare"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// -----

// ReduceSum 13+: axes is an optional constant input; noop_with_empty_axes
// turns an axis-less node into the identity.
// CHECK-LABEL: func @sum_input_axes
func.func @sum_input_axes(%x: tensor<2x3xf32>, %dyn: tensor<1xi64>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<1x1xf32>, tensor<?x?xf32>) {
  %axes = hps.constant dense<[-1]> : tensor<1xi64>
  %n = hps.none
  // CHECK: hps.reduce sum %arg0 {axes = array<i64: -1>, keepdims} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %0 = hps.onnx_node "ReduceSum"(%x, %axes) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %1 = hps.onnx_node "ReduceSum"(%x, %n) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, none) -> tensor<2x3xf32>
  // CHECK: hps.reduce sum %arg0 {axes = array<i64>, keepdims} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %2 = hps.onnx_node "ReduceSum"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  // Axes computed at run time: stays generic.
  // CHECK: hps.onnx_node "ReduceSum"
  %3 = hps.onnx_node "ReduceSum"(%x, %dyn) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  // CHECK: return {{.*}}, %arg0, {{.*}}
  return %0, %1, %2, %3 : tensor<2x1xf32>, tensor<2x3xf32>, tensor<1x1xf32>, tensor<?x?xf32>
}
