// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// ScatterND of constants folds (Swin builds its shifted-window mask so):
// whole rows with k = 1, single elements with k = 2, a negative index
// counting from the end, and the add and mul reductions of opset 16.
// CHECK-LABEL: func @scatter_nd
func.func @scatter_nd() -> (tensor<3x2xf32>, tensor<2x2xi64>, tensor<3xf32>, tensor<3xf32>) {
  %data = hps.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %rows = hps.constant dense<[[2], [0]]> : tensor<2x1xi64>
  %rowUpdates = hps.constant dense<[[10.0, 20.0], [30.0, 40.0]]> : tensor<2x2xf32>
  // CHECK-DAG: hps.constant dense<{{\[}}[3.000000e+01, 4.000000e+01], [3.000000e+00, 4.000000e+00], [1.000000e+01, 2.000000e+01]]> : tensor<3x2xf32>
  %0 = hps.onnx_node "ScatterND"(%data, %rows, %rowUpdates) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x2xf32>, tensor<2x1xi64>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %ints = hps.constant dense<0> : tensor<2x2xi64>
  %points = hps.constant dense<[[0, 1], [-1, 0]]> : tensor<2x2xi64>
  %values = hps.constant dense<[7, 9]> : tensor<2xi64>
  // CHECK-DAG: hps.constant dense<{{\[}}[0, 7], [9, 0]]> : tensor<2x2xi64>
  %1 = hps.onnx_node "ScatterND"(%ints, %points, %values) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x2xi64>, tensor<2x2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %vec = hps.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %twice = hps.constant dense<[[1], [1]]> : tensor<2x1xi64>
  %deltas = hps.constant dense<[5.0, 0.5]> : tensor<2xf32>
  // CHECK-DAG: hps.constant dense<[1.000000e+00, 7.500000e+00, 3.000000e+00]> : tensor<3xf32>
  %2 = hps.onnx_node "ScatterND"(%vec, %twice, %deltas) {attrs = {reduction = "add"}, domain = "", opset = 16 : i64} : (tensor<3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<3xf32>
  // CHECK-DAG: hps.constant dense<[1.000000e+00, 5.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %3 = hps.onnx_node "ScatterND"(%vec, %twice, %deltas) {attrs = {reduction = "mul"}, domain = "", opset = 16 : i64} : (tensor<3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<3x2xf32>, tensor<2x2xi64>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Stays generic: run-time data (the runtime has no scatter kernel), an
// index out of range, a max reduction (added by opset 18; not folded).
// CHECK-LABEL: func @scatter_nd_generic
func.func @scatter_nd_generic(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %i = hps.constant dense<[[1]]> : tensor<1x1xi64>
  %far = hps.constant dense<[[3]]> : tensor<1x1xi64>
  %u = hps.constant dense<[2.0]> : tensor<1xf32>
  %c = hps.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // CHECK: hps.onnx_node "ScatterND"(%arg0
  %0 = hps.onnx_node "ScatterND"(%x, %i, %u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "ScatterND"
  %1 = hps.onnx_node "ScatterND"(%c, %far, %u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "ScatterND"{{.*}}reduction = "max"
  %2 = hps.onnx_node "ScatterND"(%c, %i, %u) {attrs = {reduction = "max"}, domain = "", opset = 17 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
