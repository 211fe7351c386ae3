// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// Det of static float matrices is hps.determinant; an integer input stays
// generic.
// CHECK-LABEL: func @det
func.func @det(%x: tensor<2x4x4xf32>, %y: tensor<3x3xf64>, %z: tensor<3x3xi32>) -> (tensor<2xf32>, tensor<f64>, tensor<i32>) {
  // CHECK: hps.determinant %arg0 : (tensor<2x4x4xf32>) -> tensor<2xf32>
  %0 = hps.onnx_node "Det"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x4x4xf32>) -> tensor<2xf32>
  // CHECK: hps.determinant %arg1 : (tensor<3x3xf64>) -> tensor<f64>
  %1 = hps.onnx_node "Det"(%y) {attrs = {}, domain = "", opset = 22 : i64} : (tensor<3x3xf64>) -> tensor<f64>
  // CHECK: hps.onnx_node "Det"(%arg2)
  %2 = hps.onnx_node "Det"(%z) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<3x3xi32>) -> tensor<i32>
  return %0, %1, %2 : tensor<2xf32>, tensor<f64>, tensor<i32>
}
