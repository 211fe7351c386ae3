// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 9-17: a splat of the one-element `value` (default float 0) over
// a constant shape; an empty shape gives a scalar.
// CHECK-LABEL: func @constant_of_shape
func.func @constant_of_shape() -> (tensor<2x2xf32>, tensor<3xi64>, tensor<f32>, tensor<64x3x3x3xf32>) {
  %shape = hps.constant dense<[2, 2]> : tensor<2xi64>
  // CHECK-DAG: %[[Z:.*]] = hps.constant dense<0.000000e+00> : tensor<2x2xf32>
  %0 = hps.onnx_node "ConstantOfShape"(%shape) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2xi64>) -> tensor<2x2xf32>
  %three = hps.constant dense<[3]> : tensor<1xi64>
  // CHECK-DAG: %[[I:.*]] = hps.constant dense<5> : tensor<3xi64>
  %1 = hps.onnx_node "ConstantOfShape"(%three) {attrs = {value = dense<5> : tensor<1xi64>}, domain = "", opset = 13 : i64} : (tensor<1xi64>) -> tensor<3xi64>
  %empty = hps.constant dense<> : tensor<0xi64>
  // CHECK-DAG: %[[S:.*]] = hps.constant dense<1.000000e+00> : tensor<f32>
  %2 = hps.onnx_node "ConstantOfShape"(%empty) {attrs = {value = dense<1.0> : tensor<1xf32>}, domain = "", opset = 17 : i64} : (tensor<0xi64>) -> tensor<f32>
  // A weight fill as light_squeezenet's initializers are.
  %ws = hps.constant dense<[64, 3, 3, 3]> : tensor<4xi64>
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<2.000000e-02> : tensor<64x3x3x3xf32>
  %3 = hps.onnx_node "ConstantOfShape"(%ws) {attrs = {value = dense<2.0e-02> : tensor<1xf32>}, domain = "", opset = 9 : i64} : (tensor<4xi64>) -> tensor<64x3x3x3xf32>
  // CHECK: return %[[Z]], %[[I]], %[[S]], %[[W]]
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<3xi64>, tensor<f32>, tensor<64x3x3x3xf32>
}

// -----

// The shape of a static tensor folds first; a result type left dynamic by
// ONNX is fine when only hps ops read it.
// CHECK-LABEL: func @constant_of_shape_folded
func.func @constant_of_shape_folded(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  // CHECK: %[[ONES:.*]] = hps.constant dense<1.000000e+00> : tensor<2x3xf32>
  %0 = hps.onnx_node "ConstantOfShape"(%s) {attrs = {value = dense<1.0> : tensor<1xf32>}, domain = "", opset = 9 : i64} : (tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: hps.add %arg0, %[[ONES]]
  %1 = hps.onnx_node "Add"(%x, %0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<?x?xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Stays generic: a shape that is not constant, a value of several
// elements, a result returned with a type other than the constant's.
// CHECK-LABEL: func @constant_of_shape_generic
func.func @constant_of_shape_generic(%s: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<2xf32>, tensor<?xf32>) {
  // CHECK: hps.onnx_node "ConstantOfShape"(%arg0)
  %0 = hps.onnx_node "ConstantOfShape"(%s) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2xi64>) -> tensor<?x?xf32>
  %two = hps.constant dense<[2]> : tensor<1xi64>
  // CHECK: hps.onnx_node "ConstantOfShape"(%{{.*}}) {attrs = {value = dense<[1.000000e+00, 2.000000e+00]>
  %1 = hps.onnx_node "ConstantOfShape"(%two) {attrs = {value = dense<[1.0, 2.0]> : tensor<2xf32>}, domain = "", opset = 9 : i64} : (tensor<1xi64>) -> tensor<2xf32>
  // CHECK: hps.onnx_node "ConstantOfShape"(%{{.*}}) {attrs = {}
  %2 = hps.onnx_node "ConstantOfShape"(%two) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<1xi64>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<2xf32>, tensor<?xf32>
}
