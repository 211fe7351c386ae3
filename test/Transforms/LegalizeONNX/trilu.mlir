// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Trilu (14-17) with a constant k: a where with a constant [rows, cols]
// mask, broadcast over the leading axes. upper (default) keeps j - i >= k;
// lower keeps j - i <= k.
// CHECK-LABEL: func @trilu
func.func @trilu(%x: tensor<2x3x4xf32>, %i: tensor<3x3xi64>) -> (tensor<2x3x4xf32>, tensor<3x3xi64>) {
  %none = hps.none
  %k = hps.constant dense<-1> : tensor<i64>
  // CHECK-DAG: %[[U:.*]] = hps.constant dense<{{\[}}[true, true, true, true], [false, true, true, true], [false, false, true, true]]> : tensor<3x4xi1>
  // CHECK-DAG: %[[Z:.*]] = hps.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[L:.*]] = hps.constant dense<{{\[}}[false, false, false], [true, false, false], [true, true, false]]> : tensor<3x3xi1>
  // CHECK-DAG: %[[ZI:.*]] = hps.constant dense<0> : tensor<i64>
  // CHECK-DAG: %[[A:.*]] = hps.where %[[U]], %arg0, %[[Z]]
  // CHECK-DAG: %[[B:.*]] = hps.where %[[L]], %arg1, %[[ZI]]
  // CHECK: return %[[A]], %[[B]]
  %0 = hps.onnx_node "Trilu"(%x, %none) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<2x3x4xf32>, none) -> tensor<2x3x4xf32>
  %1 = hps.onnx_node "Trilu"(%i, %k) {attrs = {upper = 0 : i64}, domain = "", opset = 14 : i64} : (tensor<3x3xi64>, tensor<i64>) -> tensor<3x3xi64>
  return %0, %1 : tensor<2x3x4xf32>, tensor<3x3xi64>
}

// -----

// Stays generic: k from a graph input.
// CHECK-LABEL: func @trilu_generic
func.func @trilu_generic(%x: tensor<3x4xf32>, %k: tensor<i64>) -> tensor<3x4xf32> {
  // CHECK: hps.onnx_node "Trilu"
  %0 = hps.onnx_node "Trilu"(%x, %k) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
