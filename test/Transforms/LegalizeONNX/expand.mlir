// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 8-17: broadcast with a constant shape; a 1 in the shape keeps the
// input's extent, a longer shape adds leading axes.
// CHECK-LABEL: func @expand
func.func @expand(%x: tensor<3x1xf32>, %d: tensor<?x1xf32>) -> (tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<?x6xf32>) {
  %shape = hps.constant dense<[2, 1, 4]> : tensor<3xi64>
  // CHECK: hps.expand %arg0 {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Expand"(%x, %shape) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %s5 = hps.constant dense<[5]> : tensor<1xi64>
  // CHECK: hps.expand %arg0 {shape = array<i64: 5>} : (tensor<3x1xf32>) -> tensor<3x5xf32>
  %1 = hps.onnx_node "Expand"(%x, %s5) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x1xf32>, tensor<1xi64>) -> tensor<3x5xf32>
  %s6 = hps.constant dense<[1, 6]> : tensor<2xi64>
  // CHECK: hps.expand %arg1 {shape = array<i64: 1, 6>} : (tensor<?x1xf32>) -> tensor<?x6xf32>
  %2 = hps.onnx_node "Expand"(%d, %s6) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<?x6xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<3x5xf32>, tensor<?x6xf32>
}

// -----

// Stays generic: a shape that is not constant, one that does not
// broadcast.
// CHECK-LABEL: func @expand_generic
func.func @expand_generic(%x: tensor<3x2xf32>, %s: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<3x4xf32>) {
  // CHECK: hps.onnx_node "Expand"(%arg0, %arg1)
  %0 = hps.onnx_node "Expand"(%x, %s) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %bad = hps.constant dense<[3, 4]> : tensor<2xi64>
  // CHECK: hps.onnx_node "Expand"(%arg0, %{{.*}})
  %1 = hps.onnx_node "Expand"(%x, %bad) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<3x4xf32>
}
