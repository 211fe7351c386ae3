// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// A static input's element count is a constant; a dynamic one stays
// generic.
// CHECK-LABEL: func @size
func.func @size(%x: tensor<2x3xf32>, %d: tensor<?x3xf32>) -> (tensor<i64>, tensor<i64>) {
  // CHECK-DAG: %[[C:.*]] = hps.constant dense<6> : tensor<i64>
  %0 = hps.onnx_node "Size"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<i64>
  // CHECK-DAG: %[[G:.*]] = hps.onnx_node "Size"(%arg1)
  %1 = hps.onnx_node "Size"(%d) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<?x3xf32>) -> tensor<i64>
  // CHECK: return %[[C]], %[[G]]
  return %0, %1 : tensor<i64>, tensor<i64>
}
