// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Max/Min/Sum/Mean: left-to-right chains of broadcasting binary ops; the
// intermediate types are the broadcast shapes.
// CHECK-LABEL: func @chains
// Constants are hoisted to the top.
// CHECK: %[[N:.*]] = hps.constant dense<3.000000e+00> : tensor<f32>
func.func @chains(%a: tensor<2x1xf32>, %b: tensor<3xf32>, %c: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[M:.*]] = hps.max %arg0, %arg1 : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[MAX:.*]] = hps.max %[[M]], %arg2 : tensor<2x3xf32>
  %0 = hps.onnx_node "Max"(%a, %b, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[MIN:.*]] = hps.min %arg0, %arg1 : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %1 = hps.onnx_node "Min"(%a, %b) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[S:.*]] = hps.add %arg0, %arg1 : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[SUM:.*]] = hps.add %[[S]], %arg2 : tensor<2x3xf32>
  %2 = hps.onnx_node "Sum"(%a, %b, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // Mean divides by the input count.
  // CHECK: %[[T:.*]] = hps.add %arg0, %arg1 : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[U:.*]] = hps.add %[[T]], %arg2 : tensor<2x3xf32>
  // CHECK: %[[MEAN:.*]] = hps.div %[[U]], %[[N]] : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %3 = hps.onnx_node "Mean"(%a, %b, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[MAX]], %[[MIN]], %[[SUM]], %[[MEAN]]
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Opset 7 reads version 6, which required equal shapes (a special case).
// CHECK-LABEL: func @opset7
// CHECK: %[[N:.*]] = hps.constant dense<2.000000e+00> : tensor<f16>
func.func @opset7(%a: tensor<4xf16>, %b: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  // CHECK: %[[S:.*]] = hps.add %arg0, %arg1 : tensor<4xf16>
  %0 = hps.onnx_node "Sum"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  // CHECK: %[[T:.*]] = hps.add %arg0, %arg1 : tensor<4xf16>
  // CHECK: hps.div %[[T]], %[[N]] : tensor<4xf16>, tensor<f16> -> tensor<4xf16>
  %1 = hps.onnx_node "Mean"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf16>, tensor<4xf16>
}

// -----

// Max and Min take integers from opset 12.
// CHECK-LABEL: func @integers
func.func @integers(%a: tensor<4xi64>, %b: tensor<i64>) -> tensor<4xi64> {
  // CHECK: hps.min %arg0, %arg1 : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  %0 = hps.onnx_node "Min"(%a, %b) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// A single input is the identity, for all four.
// CHECK-LABEL: func @single
func.func @single(%a: tensor<2x1xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %0 = hps.onnx_node "Max"(%a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %1 = hps.onnx_node "Min"(%a) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %2 = hps.onnx_node "Sum"(%a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %3 = hps.onnx_node "Mean"(%a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  // CHECK-NEXT: return %arg0, %arg0, %arg0, %arg0 :
  return %0, %1, %2, %3 : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
