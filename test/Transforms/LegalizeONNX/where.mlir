// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Where (opset 9+): condition, x and y broadcast together.
// CHECK-LABEL: func @where
func.func @where(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<f32>, %i: tensor<2x3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  // CHECK: hps.where %arg0, %arg1, %arg2 : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = hps.onnx_node "Where"(%c, %x, %y) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK: hps.where %arg0, %arg3, %arg3 : (tensor<2x1xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %1 = hps.onnx_node "Where"(%c, %i, %i) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2x1xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// Where first appears in opset 9.
// CHECK-LABEL: func @opset8
func.func @opset8(%c: tensor<3xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: hps.onnx_node "Where"
  %0 = hps.onnx_node "Where"(%c, %x, %x) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
