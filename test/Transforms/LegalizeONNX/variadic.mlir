// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Max/Min/Sum/Mean: left-to-right chains of broadcasting binary ops.
// CHECK-LABEL: func @chains
// CHECK: %[[N:.*]] = hps.constant dense<2.000000e+00> : tensor<f32>
func.func @chains(%a: tensor<2x1xf32>, %b: tensor<3xf32>, %c: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>) {
  // CHECK: %[[M:.*]] = hps.max %arg0, %arg1 : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: hps.max %[[M]], %arg2 : tensor<2x3xf32>
  %0 = hps.onnx_node "Max"(%a, %b, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.min %arg0, %arg1
  %1 = hps.onnx_node "Min"(%a, %b) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[S:.*]] = hps.add %arg0, %arg1
  // CHECK: hps.add %[[S]], %arg2
  %2 = hps.onnx_node "Sum"(%a, %b, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[T:.*]] = hps.add %arg0, %arg1
  // CHECK: hps.div %[[T]], %[[N]] : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %3 = hps.onnx_node "Mean"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // A single input is the identity.
  %4 = hps.onnx_node "Max"(%a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  // CHECK: return {{.*}}, %arg0 :
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>
}
