// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 1-11: the tensor `value`.
// CHECK-LABEL: func @constant_value
func.func @constant_value() -> (tensor<2xf32>, tensor<2x2xi64>) {
  // CHECK-DAG: %[[A:.*]] = hps.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = hps.onnx_node "Constant"() {attrs = {value = dense<[1.0, 2.0]> : tensor<2xf32>}, domain = "", opset = 7 : i64} : () -> tensor<2xf32>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
  %1 = hps.onnx_node "Constant"() {attrs = {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>}, domain = "", opset = 11 : i64} : () -> tensor<2x2xi64>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2xf32>, tensor<2x2xi64>
}

// -----

// Opset 12+: value_float, value_floats, value_int, value_ints.
// CHECK-LABEL: func @constant_12
func.func @constant_12() -> (tensor<f32>, tensor<2xf32>, tensor<i64>, tensor<3xi64>, tensor<f32>) {
  // CHECK-DAG: %[[F:.*]] = hps.constant dense<2.500000e+00> : tensor<f32>
  %0 = hps.onnx_node "Constant"() {attrs = {value_float = 2.5 : f32}, domain = "", opset = 12 : i64} : () -> tensor<f32>
  // CHECK-DAG: %[[FS:.*]] = hps.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>
  %1 = hps.onnx_node "Constant"() {attrs = {value_floats = array<f32: 1.5, -2.0>}, domain = "", opset = 13 : i64} : () -> tensor<2xf32>
  // CHECK-DAG: %[[I:.*]] = hps.constant dense<7> : tensor<i64>
  %2 = hps.onnx_node "Constant"() {attrs = {value_int = 7 : i64}, domain = "", opset = 17 : i64} : () -> tensor<i64>
  // CHECK-DAG: %[[IS:.*]] = hps.constant dense<[4, 5, 6]> : tensor<3xi64>
  %3 = hps.onnx_node "Constant"() {attrs = {value_ints = array<i64: 4, 5, 6>}, domain = "", opset = 13 : i64} : () -> tensor<3xi64>
  // CHECK-DAG: %[[V:.*]] = hps.constant dense<3.000000e+00> : tensor<f32>
  %4 = hps.onnx_node "Constant"() {attrs = {value = dense<3.0> : tensor<f32>}, domain = "", opset = 13 : i64} : () -> tensor<f32>
  // CHECK: return %[[F]], %[[FS]], %[[I]], %[[IS]], %[[V]]
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<2xf32>, tensor<i64>, tensor<3xi64>, tensor<f32>
}

// -----

// Stays generic: strings and sparse values have no hps form; value_* before
// opset 12 is not in the schema; a value whose type contradicts the result.
// CHECK-LABEL: func @constant_generic
func.func @constant_generic() -> (tensor<f32>, tensor<f32>, tensor<i64>, tensor<3xf32>) {
  // CHECK: hps.onnx_node "Constant"() {attrs = {value_string = "abc"}
  %0 = hps.onnx_node "Constant"() {attrs = {value_string = "abc"}, domain = "", opset = 13 : i64} : () -> tensor<f32>
  // CHECK: hps.onnx_node "Constant"() {attrs = {sparse_value = dense<1.000000e+00> : tensor<f32>}
  %1 = hps.onnx_node "Constant"() {attrs = {sparse_value = dense<1.0> : tensor<f32>}, domain = "", opset = 11 : i64} : () -> tensor<f32>
  // CHECK: hps.onnx_node "Constant"() {attrs = {value_int = 7 : i64}
  %2 = hps.onnx_node "Constant"() {attrs = {value_int = 7 : i64}, domain = "", opset = 11 : i64} : () -> tensor<i64>
  // CHECK: hps.onnx_node "Constant"() {attrs = {value = dense<1> : tensor<3xi64>}
  %3 = hps.onnx_node "Constant"() {attrs = {value = dense<1> : tensor<3xi64>}, domain = "", opset = 13 : i64} : () -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<i64>, tensor<3xf32>
}
