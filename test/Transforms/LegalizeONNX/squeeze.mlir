// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 1-10 and 11-12: an `axes` attribute (negative from 11); without
// it every size-1 axis goes.
// CHECK-LABEL: func @squeeze_attr
func.func @squeeze_attr(%x: tensor<1x3x1xf32>) -> (tensor<3x1xf32>, tensor<3xf32>, tensor<1x3xf32>) {
  // CHECK: hps.squeeze %arg0 {axes = array<i64: 0>} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  %0 = hps.onnx_node "Squeeze"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 7 : i64} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  // CHECK: hps.squeeze %arg0 {axes = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %1 = hps.onnx_node "Squeeze"(%x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  // CHECK: hps.squeeze %arg0 {axes = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  %2 = hps.onnx_node "Squeeze"(%x) {attrs = {axes = array<i64: -1>}, domain = "", opset = 11 : i64} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  return %0, %1, %2 : tensor<3x1xf32>, tensor<3xf32>, tensor<1x3xf32>
}

// -----

// Opset 13+: an optional constant `axes` input.
// CHECK-LABEL: func @squeeze_13
func.func @squeeze_13(%x: tensor<1x3x1xf32>, %d: tensor<?x1xf32>) -> (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<?xf32>) {
  %ax = hps.constant dense<[-1]> : tensor<1xi64>
  %none = hps.none
  // CHECK: hps.squeeze %arg0 {axes = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  %0 = hps.onnx_node "Squeeze"(%x, %ax) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3x1xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  // CHECK: hps.squeeze %arg0 {axes = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %1 = hps.onnx_node "Squeeze"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  // CHECK: hps.squeeze %arg0 {axes = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %2 = hps.onnx_node "Squeeze"(%x, %none) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x3x1xf32>, none) -> tensor<3xf32>
  // Listed axes may sit beside a dynamic extent.
  // CHECK: hps.squeeze %arg1 {axes = array<i64: -1>} : (tensor<?x1xf32>) -> tensor<?xf32>
  %3 = hps.onnx_node "Squeeze"(%d, %ax) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x1xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0, %1, %2, %3 : tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<?xf32>
}

// -----

// Stays generic: no axes over a dynamic shape (which axes go is only known
// at run time), axes that are not constant, the attribute at opset 13, an
// axis whose extent is not 1.
// CHECK-LABEL: func @squeeze_generic
func.func @squeeze_generic(%d: tensor<?x1xf32>, %x: tensor<1x3xf32>, %a: tensor<1xi64>) -> (tensor<?xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) {
  // CHECK: hps.onnx_node "Squeeze"(%arg0) {attrs = {}
  %0 = hps.onnx_node "Squeeze"(%d) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x1xf32>) -> tensor<?xf32>
  // CHECK: hps.onnx_node "Squeeze"(%arg1, %arg2)
  %1 = hps.onnx_node "Squeeze"(%x, %a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "Squeeze"(%arg1) {attrs = {axes = array<i64: 0>}
  %2 = hps.onnx_node "Squeeze"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 13 : i64} : (tensor<1x3xf32>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "Squeeze"(%arg1) {attrs = {axes = array<i64: 1>}
  %3 = hps.onnx_node "Squeeze"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 11 : i64} : (tensor<1x3xf32>) -> tensor<1xf32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>
}
