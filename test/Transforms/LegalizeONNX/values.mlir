// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2xf32>, tensor<f32>, tensor<3xi64>, tensor<i64>, tensor<2x2xf32>) {
  // CHECK-DAG: hps.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = hps.onnx_node "Constant"() {attrs = {value = dense<[1.0, 2.0]> : tensor<2xf32>}, domain = "", opset = 11 : i64} : () -> tensor<2xf32>
  // Opset 12 scalar and list forms.
  // CHECK-DAG: hps.constant dense<2.500000e+00> : tensor<f32>
  %1 = hps.onnx_node "Constant"() {attrs = {value_float = 2.5 : f32}, domain = "", opset = 12 : i64} : () -> tensor<f32>
  // CHECK-DAG: hps.constant dense<[4, 5, 6]> : tensor<3xi64>
  %2 = hps.onnx_node "Constant"() {attrs = {value_ints = array<i64: 4, 5, 6>}, domain = "", opset = 13 : i64} : () -> tensor<3xi64>
  // CHECK-DAG: hps.constant dense<7> : tensor<i64>
  %3 = hps.onnx_node "Constant"() {attrs = {value_int = 7 : i64}, domain = "", opset = 13 : i64} : () -> tensor<i64>
  // ConstantOfShape: a splat of `value` (default float 0).
  %shape = hps.constant dense<[2, 2]> : tensor<2xi64>
  // CHECK-DAG: hps.constant dense<0.000000e+00> : tensor<2x2xf32>
  %4 = hps.onnx_node "ConstantOfShape"(%shape) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2xi64>) -> tensor<2x2xf32>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<f32>, tensor<3xi64>, tensor<i64>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func @shape_size_range
func.func @shape_size_range(%x: tensor<?x3x4xf32>, %y: tensor<2x3xf32>) -> (tensor<3xi64>, tensor<2xi64>, tensor<i64>, tensor<3xi64>) {
  // A dynamic extent keeps hps.shape; opset 15 start/end select axes.
  // CHECK-DAG: hps.shape %arg0 : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %0 = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x3x4xf32>) -> tensor<3xi64>
  // Static extents fold.
  // CHECK-DAG: hps.constant dense<[3, 4]> : tensor<2xi64>
  %1 = hps.onnx_node "Shape"(%x) {attrs = {start = 1 : i64}, domain = "", opset = 15 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  // CHECK-DAG: hps.constant dense<6> : tensor<i64>
  %2 = hps.onnx_node "Size"(%y) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<i64>
  %s = hps.constant dense<1> : tensor<i64>
  %l = hps.constant dense<7> : tensor<i64>
  %d = hps.constant dense<2> : tensor<i64>
  // CHECK-DAG: hps.constant dense<[1, 3, 5]> : tensor<3xi64>
  %3 = hps.onnx_node "Range"(%s, %l, %d) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<2xi64>, tensor<i64>, tensor<3xi64>
}

// -----

// Identity and inference-mode Dropout disappear; a used mask or a training
// flag keeps Dropout generic.
// CHECK-LABEL: func @identities
func.func @identities(%x: tensor<4xf32>, %train: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %0 = hps.onnx_node "Identity"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1:2 = hps.onnx_node "Dropout"(%x) {attrs = {ratio = 0.5 : f32}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %r = hps.constant dense<0.2> : tensor<f32>
  %f = hps.constant dense<false> : tensor<i1>
  %2 = hps.onnx_node "Dropout"(%x, %r, %f) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  // CHECK: %[[MASKED:.*]]:2 = hps.onnx_node "Dropout"
  %3:2 = hps.onnx_node "Dropout"(%x) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  // CHECK: %[[TRAIN:.*]] = hps.onnx_node "Dropout"
  %4 = hps.onnx_node "Dropout"(%x, %r, %train) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  // CHECK: return %arg0, %arg0, %arg0, %[[MASKED]]#1, %[[TRAIN]]
  return %0, %1#0, %2, %3#1, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}
