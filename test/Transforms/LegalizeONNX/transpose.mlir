// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// One schema for opsets 7-17: perm defaults to reversing the axes.
// CHECK-LABEL: func @transpose
func.func @transpose(%x: tensor<2x3x4xf32>, %d: tensor<?x3xf32>) -> (tensor<4x3x2xf32>, tensor<2x4x3xf32>, tensor<3x?xf32>) {
  // CHECK: hps.transpose %arg0 {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %0 = hps.onnx_node "Transpose"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK: hps.transpose %arg0 {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %1 = hps.onnx_node "Transpose"(%x) {attrs = {perm = array<i64: 0, 2, 1>}, domain = "", opset = 7 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  // CHECK: hps.transpose %arg1 {perm = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %2 = hps.onnx_node "Transpose"(%d) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  return %0, %1, %2 : tensor<4x3x2xf32>, tensor<2x4x3xf32>, tensor<3x?xf32>
}

// -----

// Stays generic: a perm that is not a permutation, the default perm of an
// unranked input.
// CHECK-LABEL: func @transpose_generic
func.func @transpose_generic(%x: tensor<2x3xf32>, %u: tensor<*xf32>) -> (tensor<2x2xf32>, tensor<*xf32>) {
  // CHECK: hps.onnx_node "Transpose"(%arg0)
  %0 = hps.onnx_node "Transpose"(%x) {attrs = {perm = array<i64: 0, 0>}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  // CHECK: hps.onnx_node "Transpose"(%arg1)
  %1 = hps.onnx_node "Transpose"(%u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<*xf32>
}
