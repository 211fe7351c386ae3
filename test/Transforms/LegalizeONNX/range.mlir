// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Range-11 with constant scalar inputs: max(ceil((limit - start) / delta),
// 0) elements, exact for integers.
// CHECK-LABEL: func @range
func.func @range() -> (tensor<3xi64>, tensor<4xi32>, tensor<3xf32>, tensor<0xi64>) {
  %s = hps.constant dense<1> : tensor<i64>
  %l = hps.constant dense<7> : tensor<i64>
  %d = hps.constant dense<2> : tensor<i64>
  // CHECK-DAG: %[[A:.*]] = hps.constant dense<[1, 3, 5]> : tensor<3xi64>
  %0 = hps.onnx_node "Range"(%s, %l, %d) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %s2 = hps.constant dense<10> : tensor<i32>
  %l2 = hps.constant dense<6> : tensor<i32>
  %d2 = hps.constant dense<-1> : tensor<i32>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<[10, 9, 8, 7]> : tensor<4xi32>
  %1 = hps.onnx_node "Range"(%s2, %l2, %d2) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4xi32>
  %s3 = hps.constant dense<0.5> : tensor<f32>
  %l3 = hps.constant dense<2.0> : tensor<f32>
  %d3 = hps.constant dense<0.5> : tensor<f32>
  // CHECK-DAG: %[[C:.*]] = hps.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00]> : tensor<3xf32>
  %2 = hps.onnx_node "Range"(%s3, %l3, %d3) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  // An empty range.
  // CHECK-DAG: %[[D:.*]] = hps.constant dense<> : tensor<0xi64>
  %3 = hps.onnx_node "Range"(%l, %s, %d) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<0xi64>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<4xi32>, tensor<3xf32>, tensor<0xi64>
}

// -----

// Stays generic: an input that is not constant, a zero delta.
// CHECK-LABEL: func @range_generic
func.func @range_generic(%n: tensor<i64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %s = hps.constant dense<0> : tensor<i64>
  %d = hps.constant dense<1> : tensor<i64>
  // CHECK: hps.onnx_node "Range"(%{{.*}}, %arg0, %{{.*}})
  %0 = hps.onnx_node "Range"(%s, %n, %d) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: hps.onnx_node "Range"(%{{.*}}, %{{.*}}, %{{.*}})
  %1 = hps.onnx_node "Range"(%s, %d, %s) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0, %1 : tensor<?xi64>, tensor<?xi64>
}
