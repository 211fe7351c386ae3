// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 1-8 and 9-10: axis in [0, rank], default 1; 11+: negative axes.
// CHECK-LABEL: func @flatten
func.func @flatten(%x: tensor<2x3x4xf32>, %d: tensor<?x3x4xf32>) -> (tensor<2x12xf32>, tensor<1x24xf32>, tensor<24x1xf32>, tensor<6x4xf32>, tensor<?x12xf32>) {
  // CHECK: hps.flatten %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %0 = hps.onnx_node "Flatten"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: hps.flatten %arg0 {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  %1 = hps.onnx_node "Flatten"(%x) {attrs = {axis = 0 : i64}, domain = "", opset = 9 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  // CHECK: hps.flatten %arg0 {axis = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  %2 = hps.onnx_node "Flatten"(%x) {attrs = {axis = 3 : i64}, domain = "", opset = 10 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  // CHECK: hps.flatten %arg0 {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %3 = hps.onnx_node "Flatten"(%x) {attrs = {axis = -1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: hps.flatten %arg1 {axis = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  %4 = hps.onnx_node "Flatten"(%d) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  return %0, %1, %2, %3, %4 : tensor<2x12xf32>, tensor<1x24xf32>, tensor<24x1xf32>, tensor<6x4xf32>, tensor<?x12xf32>
}

// -----

// Stays generic: an axis beyond the rank.
// CHECK-LABEL: func @flatten_generic
func.func @flatten_generic(%x: tensor<2x3x4xf32>) -> tensor<24x1xf32> {
  // CHECK: hps.onnx_node "Flatten"
  %0 = hps.onnx_node "Flatten"(%x) {attrs = {axis = 4 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  return %0 : tensor<24x1xf32>
}
