// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 1-14: every extent. A dynamic one keeps hps.shape; static
// extents fold.
// CHECK-LABEL: func @shape
func.func @shape(%x: tensor<?x3x4xf32>, %y: tensor<2x3xf32>) -> (tensor<3xi64>, tensor<2xi64>) {
  // CHECK-DAG: %[[S:.*]] = hps.shape %arg0 : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %0 = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
  // CHECK-DAG: %[[C:.*]] = hps.constant dense<[2, 3]> : tensor<2xi64>
  %1 = hps.onnx_node "Shape"(%y) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  // CHECK: return %[[S]], %[[C]]
  return %0, %1 : tensor<3xi64>, tensor<2xi64>
}

// -----

// Opset 15+: start and end (negative from the back, clamped).
// CHECK-LABEL: func @shape_15
func.func @shape_15(%x: tensor<?x3x4xf32>) -> (tensor<2xi64>, tensor<1xi64>, tensor<2xi64>, tensor<3xi64>) {
  // CHECK-DAG: %[[A:.*]] = hps.constant dense<[3, 4]> : tensor<2xi64>
  %0 = hps.onnx_node "Shape"(%x) {attrs = {start = 1 : i64}, domain = "", opset = 15 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  // CHECK-DAG: %[[B:.*]] = hps.shape %arg0 {end = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<1xi64>
  %1 = hps.onnx_node "Shape"(%x) {attrs = {end = 1 : i64}, domain = "", opset = 15 : i64} : (tensor<?x3x4xf32>) -> tensor<1xi64>
  // CHECK-DAG: %[[C:.*]] = hps.shape %arg0 {end = -1 : i64, start = -10 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %2 = hps.onnx_node "Shape"(%x) {attrs = {start = -10 : i64, end = -1 : i64}, domain = "", opset = 17 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  // CHECK-DAG: %[[D:.*]] = hps.shape %arg0 {end = 100 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %3 = hps.onnx_node "Shape"(%x) {attrs = {end = 100 : i64}, domain = "", opset = 15 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<1xi64>, tensor<2xi64>, tensor<3xi64>
}

// -----

// Stays generic: start/end before opset 15; a result that is not a 1-D
// i64 tensor.
// CHECK-LABEL: func @shape_generic
func.func @shape_generic(%x: tensor<?x3xf32>) -> (tensor<1xi64>, tensor<*xi64>) {
  // CHECK: hps.onnx_node "Shape"(%arg0) {attrs = {start = 1 : i64}
  %0 = hps.onnx_node "Shape"(%x) {attrs = {start = 1 : i64}, domain = "", opset = 14 : i64} : (tensor<?x3xf32>) -> tensor<1xi64>
  // CHECK: hps.onnx_node "Shape"(%arg0) {attrs = {}
  %1 = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x3xf32>) -> tensor<*xi64>
  return %0, %1 : tensor<1xi64>, tensor<*xi64>
}
