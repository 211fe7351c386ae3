// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @where
func.func @where(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<f32>) -> tensor<2x3xf32> {
  // CHECK: hps.where %arg0, %arg1, %arg2 : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = hps.onnx_node "Where"(%c, %x, %y) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @cast
func.func @cast(%x: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf16>) {
  // CHECK: hps.cast %arg0 : (tensor<4xf32>) -> tensor<4xi64>
  %0 = hps.onnx_node "Cast"(%x) {attrs = {to = 7 : i64}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xi64>
  // CHECK: hps.cast %arg0 : (tensor<4xf32>) -> tensor<4xf16>
  %1 = hps.onnx_node "Cast"(%x) {attrs = {to = 10 : i64}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  return %0, %1 : tensor<4xi64>, tensor<4xf16>
}

// -----

// Constant casts fold (shape arithmetic often casts).
// CHECK-LABEL: func @cast_folds
func.func @cast_folds() -> tensor<2xf32> {
  // CHECK: hps.constant dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>
  %c = hps.constant dense<[3, -1]> : tensor<2xi64>
  %0 = hps.onnx_node "Cast"(%c) {attrs = {to = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
