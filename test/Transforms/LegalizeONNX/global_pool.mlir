// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// GlobalAveragePool and GlobalMaxPool (one schema each, opsets 7-17): every
// spatial axis becomes 1.
// CHECK-LABEL: func @global
func.func @global(%x: tensor<2x3x4x5xf32>, %l: tensor<2x3x7xf32>, %d: tensor<?x3x?x?x?xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1xf32>, tensor<?x3x1x1x1xf32>) {
  // CHECK: hps.global_avg_pool %arg0 : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %0 = hps.onnx_node "GlobalAveragePool"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  // CHECK: hps.global_max_pool %arg0 : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %1 = hps.onnx_node "GlobalMaxPool"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  // CHECK: hps.global_max_pool %arg1 : (tensor<2x3x7xf32>) -> tensor<2x3x1xf32>
  %2 = hps.onnx_node "GlobalMaxPool"(%l) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<2x3x7xf32>) -> tensor<2x3x1xf32>
  // CHECK: hps.global_avg_pool %arg2 : (tensor<?x3x?x?x?xf32>) -> tensor<?x3x1x1x1xf32>
  %3 = hps.onnx_node "GlobalAveragePool"(%d) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x3x?x?x?xf32>) -> tensor<?x3x1x1x1xf32>
  return %0, %1, %2, %3 : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1xf32>, tensor<?x3x1x1x1xf32>
}

// -----

// Stays generic: a 2-D input has no spatial axes; an attribute no schema
// defines.
// CHECK-LABEL: func @global_generic
func.func @global_generic(%x: tensor<2x3xf32>, %y: tensor<2x3x4x4xf32>) -> (tensor<2x3xf32>, tensor<2x3x1x1xf32>) {
  // CHECK: hps.onnx_node "GlobalAveragePool"(%arg0)
  %0 = hps.onnx_node "GlobalAveragePool"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.onnx_node "GlobalMaxPool"(%arg1) {attrs = {keepdims = 1 : i64}
  %1 = hps.onnx_node "GlobalMaxPool"(%y) {attrs = {keepdims = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3x1x1xf32>
}
