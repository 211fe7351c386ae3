// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 2-10: `split` attribute, default axis 0, equal parts without it.
// CHECK-LABEL: func @split_7
func.func @split_7(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  // CHECK: hps.split %arg0 {axis = 0 : i64, sizes = array<i64: 2, 4>} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  %0:2 = hps.onnx_node "Split"(%x) {attrs = {split = array<i64: 2, 4>}, domain = "", opset = 7 : i64} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  // CHECK: hps.split %arg0 {axis = 0 : i64, sizes = array<i64: 3, 3>} : (tensor<6x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  %1:2 = hps.onnx_node "Split"(%x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<6x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<2x4xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Opsets 11-12: negative axes.
// CHECK-LABEL: func @split_11
func.func @split_11(%x: tensor<6x4xf32>) -> (tensor<6x1xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6x2xf32>) {
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 1, 3>} : (tensor<6x4xf32>) -> (tensor<6x1xf32>, tensor<6x3xf32>)
  %0:2 = hps.onnx_node "Split"(%x) {attrs = {axis = -1 : i64, split = array<i64: 1, 3>}, domain = "", opset = 11 : i64} : (tensor<6x4xf32>) -> (tensor<6x1xf32>, tensor<6x3xf32>)
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xf32>)
  %1:2 = hps.onnx_node "Split"(%x) {attrs = {axis = -1 : i64}, domain = "", opset = 12 : i64} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xf32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<6x1xf32>, tensor<6x3xf32>, tensor<6x2xf32>, tensor<6x2xf32>
}

// -----

// Opsets 13-17: an optional constant `split` input; a dynamic extent off
// the axis is fine.
// CHECK-LABEL: func @split_13
func.func @split_13(%x: tensor<?x6xf32>) -> (tensor<?x1xf32>, tensor<?x5xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x6xf32>) {
  %s = hps.constant dense<[1, 5]> : tensor<2xi64>
  %none = hps.none
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 1, 5>} : (tensor<?x6xf32>) -> (tensor<?x1xf32>, tensor<?x5xf32>)
  %0:2 = hps.onnx_node "Split"(%x, %s) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<?x6xf32>, tensor<2xi64>) -> (tensor<?x1xf32>, tensor<?x5xf32>)
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<?x6xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
  %1:3 = hps.onnx_node "Split"(%x, %none) {attrs = {axis = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<?x6xf32>, none) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 6>} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %2 = hps.onnx_node "Split"(%x) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  return %0#0, %0#1, %1#0, %1#1, %1#2, %2 : tensor<?x1xf32>, tensor<?x5xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x6xf32>
}

// -----

// Stays generic: a `split` that is not constant, the opset-12 `split`
// attribute at opset 13, parts that do not add up, an uneven or dynamic
// equal split.
// CHECK-LABEL: func @split_generic
func.func @split_generic(%x: tensor<5x4xf32>, %s: tensor<2xi64>, %d: tensor<?x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>) {
  // CHECK: hps.onnx_node "Split"(%arg0, %arg1)
  %0:2 = hps.onnx_node "Split"(%x, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> (tensor<2x4xf32>, tensor<3x4xf32>)
  // CHECK: hps.onnx_node "Split"(%arg0) {attrs = {split = array<i64: 2, 3>}
  %1:2 = hps.onnx_node "Split"(%x) {attrs = {split = array<i64: 2, 3>}, domain = "", opset = 13 : i64} : (tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>)
  // CHECK: hps.onnx_node "Split"(%arg0) {attrs = {split = array<i64: 2, 2>}
  %2:2 = hps.onnx_node "Split"(%x) {attrs = {split = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // CHECK: hps.onnx_node "Split"(%arg0) {attrs = {}
  %3:2 = hps.onnx_node "Split"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>)
  // CHECK: hps.onnx_node "Split"(%arg2) {attrs = {}
  %4:2 = hps.onnx_node "Split"(%d) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %0#0, %1#1 : tensor<2x4xf32>, tensor<3x4xf32>
}

// -----

// Opset 18: num_outputs cuts chunks of ceil(extent / num_outputs), the last
// one smaller.
// CHECK-LABEL: func @split_18_num_outputs
func.func @split_18_num_outputs(%x: tensor<3x7xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x1xf32>) {
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 3, 3, 1>} : (tensor<3x7xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x1xf32>)
  %0:3 = hps.onnx_node "Split"(%x) {attrs = {axis = 1 : i64, num_outputs = 3 : i64}, domain = "", opset = 18 : i64} : (tensor<3x7xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x1xf32>)
  return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x1xf32>
}

// -----

// num_outputs is opset 18's: at 17 the node stays generic.
// CHECK-LABEL: func @split_17_num_outputs
func.func @split_17_num_outputs(%x: tensor<3x6xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  // CHECK: hps.onnx_node "Split"
  %0:2 = hps.onnx_node "Split"(%x) {attrs = {axis = 1 : i64, num_outputs = 2 : i64}, domain = "", opset = 17 : i64} : (tensor<3x6xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x3xf32>
}
