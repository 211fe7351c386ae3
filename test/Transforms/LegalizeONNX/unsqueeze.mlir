// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 1-10 and 11-12: a required `axes` attribute (negative from 11),
// numbered in the result.
// CHECK-LABEL: func @unsqueeze_attr
func.func @unsqueeze_attr(%x: tensor<3x4xf32>) -> (tensor<1x3x4xf32>, tensor<3x1x4x1xf32>, tensor<3x4x1xf32>) {
  // CHECK: hps.unsqueeze %arg0 {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  %0 = hps.onnx_node "Unsqueeze"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 7 : i64} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  // CHECK: hps.unsqueeze %arg0 {axes = array<i64: 3, 1>} : (tensor<3x4xf32>) -> tensor<3x1x4x1xf32>
  %1 = hps.onnx_node "Unsqueeze"(%x) {attrs = {axes = array<i64: 3, 1>}, domain = "", opset = 10 : i64} : (tensor<3x4xf32>) -> tensor<3x1x4x1xf32>
  // CHECK: hps.unsqueeze %arg0 {axes = array<i64: -1>} : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
  %2 = hps.onnx_node "Unsqueeze"(%x) {attrs = {axes = array<i64: -1>}, domain = "", opset = 12 : i64} : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
  return %0, %1, %2 : tensor<1x3x4xf32>, tensor<3x1x4x1xf32>, tensor<3x4x1xf32>
}

// -----

// Opset 13+: a constant `axes` input; a scalar becomes a vector.
// CHECK-LABEL: func @unsqueeze_13
func.func @unsqueeze_13(%x: tensor<?x4xf32>, %s: tensor<f32>) -> (tensor<1x?x1x4xf32>, tensor<1xf32>) {
  %ax = hps.constant dense<[0, -2]> : tensor<2xi64>
  %zero = hps.constant dense<0> : tensor<1xi64>
  // CHECK: hps.unsqueeze %arg0 {axes = array<i64: 0, -2>} : (tensor<?x4xf32>) -> tensor<1x?x1x4xf32>
  %0 = hps.onnx_node "Unsqueeze"(%x, %ax) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<1x?x1x4xf32>
  // CHECK: hps.unsqueeze %arg1 {axes = array<i64: 0>} : (tensor<f32>) -> tensor<1xf32>
  %1 = hps.onnx_node "Unsqueeze"(%s, %zero) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<f32>, tensor<1xi64>) -> tensor<1xf32>
  return %0, %1 : tensor<1x?x1x4xf32>, tensor<1xf32>
}

// -----

// Stays generic: no axes (required), non-constant axes, the attribute at
// opset 13, a repeated axis.
// CHECK-LABEL: func @unsqueeze_generic
func.func @unsqueeze_generic(%x: tensor<3xf32>, %a: tensor<1xi64>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x1x3xf32>) {
  // CHECK: hps.onnx_node "Unsqueeze"(%arg0) {attrs = {}
  %0 = hps.onnx_node "Unsqueeze"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
  // CHECK: hps.onnx_node "Unsqueeze"(%arg0, %arg1)
  %1 = hps.onnx_node "Unsqueeze"(%x, %a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  // CHECK: hps.onnx_node "Unsqueeze"(%arg0) {attrs = {axes = array<i64: 0>}
  %2 = hps.onnx_node "Unsqueeze"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 13 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
  // CHECK: hps.onnx_node "Unsqueeze"(%arg0) {attrs = {axes = array<i64: 0, 0>}
  %3 = hps.onnx_node "Unsqueeze"(%x) {attrs = {axes = array<i64: 0, 0>}, domain = "", opset = 11 : i64} : (tensor<3xf32>) -> tensor<1x1x3xf32>
  return %0, %1, %2, %3 : tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x1x3xf32>
}
