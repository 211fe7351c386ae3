// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @transpose
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<4x3x2xf32>, tensor<2x4x3xf32>) {
  // The default permutation reverses the axes.
  // CHECK: hps.transpose %arg0 {perm = array<i64: 2, 1, 0>}
  %0 = hps.onnx_node "Transpose"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK: hps.transpose %arg0 {perm = array<i64: 0, 2, 1>}
  %1 = hps.onnx_node "Transpose"(%x) {attrs = {perm = array<i64: 0, 2, 1>}, domain = "", opset = 7 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return %0, %1 : tensor<4x3x2xf32>, tensor<2x4x3xf32>
}

// -----

// Squeeze/Unsqueeze axes: attribute before 13, constant input after.
// CHECK-LABEL: func @squeeze
func.func @squeeze(%x: tensor<1x3x1xf32>) -> (tensor<3x1xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<1x1x3x1xf32>, tensor<3x1x1x1xf32>) {
  // CHECK: hps.squeeze %arg0 {axes = array<i64: 0>} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  %0 = hps.onnx_node "Squeeze"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 11 : i64} : (tensor<1x3x1xf32>) -> tensor<3x1xf32>
  // Without axes every size-1 axis goes.
  // CHECK: hps.squeeze %arg0 {axes = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %1 = hps.onnx_node "Squeeze"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  %ax = hps.constant dense<[-1]> : tensor<1xi64>
  // CHECK: hps.squeeze %arg0 {axes = array<i64: -1>} : (tensor<1x3x1xf32>) -> tensor<1x3xf32>
  %2 = hps.onnx_node "Squeeze"(%x, %ax) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3x1xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  // CHECK: hps.unsqueeze %arg0 {axes = array<i64: 0>} : (tensor<1x3x1xf32>) -> tensor<1x1x3x1xf32>
  %3 = hps.onnx_node "Unsqueeze"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 7 : i64} : (tensor<1x3x1xf32>) -> tensor<1x1x3x1xf32>
  %ax2 = hps.constant dense<[1, -1]> : tensor<2xi64>
  %4 = hps.onnx_node "Squeeze"(%x, %ax) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3x1xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  // CHECK: hps.unsqueeze %{{.*}} {axes = array<i64: 1, -1>} : (tensor<1x3xf32>) -> tensor<1x1x3x1xf32>
  %5 = hps.onnx_node "Unsqueeze"(%4, %ax2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<1x1x3x1xf32>
  %6 = hps.transpose %5 {perm = array<i64: 2, 0, 1, 3>} : (tensor<1x1x3x1xf32>) -> tensor<3x1x1x1xf32>
  return %0, %1, %2, %3, %6 : tensor<3x1xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<1x1x3x1xf32>, tensor<3x1x1x1xf32>
}

// -----

// CHECK-LABEL: func @expand
func.func @expand(%x: tensor<3x1xf32>, %s: tensor<2xi64>) -> (tensor<2x3x4xf32>, tensor<?x?xf32>) {
  %shape = hps.constant dense<[2, 1, 4]> : tensor<3xi64>
  // CHECK: hps.expand %arg0 {shape = array<i64: 2, 1, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Expand"(%x, %shape) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  // CHECK: hps.onnx_node "Expand"
  %1 = hps.onnx_node "Expand"(%x, %s) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<?x?xf32>
}

// -----

// Pad: attributes before opset 11, constant inputs after.
// CHECK-LABEL: func @pad
func.func @pad(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<4x3xf32>, tensor<2x5xf32>, tensor<2x7xi32>, tensor<2x2xf32>) {
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: 1, 0, 1, 0>, value = 5.000000e-01 : f32}
  %0 = hps.onnx_node "Pad"(%x) {attrs = {pads = array<i64: 1, 0, 1, 0>, value = 0.5 : f32}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  %p = hps.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode reflect>, pads = array<i64: 0, 1, 0, 1>, value = 0.000000e+00 : f32}
  %1 = hps.onnx_node "Pad"(%x, %p) {attrs = {mode = "reflect"}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x5xf32>
  %q = hps.constant dense<[0, 2, 0, 2]> : tensor<4xi64>
  %v = hps.constant dense<7> : tensor<i32>
  // CHECK: hps.pad %arg1 {mode = #hps<pad_mode edge>, pads = array<i64: 0, 2, 0, 2>, value = 7 : i32}
  %2 = hps.onnx_node "Pad"(%i, %q, %v) {attrs = {mode = "edge"}, domain = "", opset = 11 : i64} : (tensor<2x3xi32>, tensor<4xi64>, tensor<i32>) -> tensor<2x7xi32>
  // Negative pads crop.
  %r = hps.constant dense<[0, 0, 0, -1]> : tensor<4xi64>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 0, -1>
  %3 = hps.onnx_node "Pad"(%x, %r) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x2xf32>
  return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<2x5xf32>, tensor<2x7xi32>, tensor<2x2xf32>
}

// -----

// Gather on a 2-D weight along axis 0 is a sparse embedding lookup; any
// other gather is dense.
// CHECK-LABEL: func @gather
func.func @gather(%ids: tensor<4x3xi64>, %x: tensor<5x6xf32>, %j: tensor<2xi32>) -> (tensor<4x3x8xf32>, tensor<5x2xf32>, tensor<2x6xf32>) {
  %table = hps.weight "table" dense<0.5> : tensor<100x8xf32>
  // CHECK: hps.embedding_lookup %{{.*}}, %arg0 : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %0 = hps.onnx_node "Gather"(%table, %ids) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  // CHECK: hps.gather %arg1, %arg2 {axis = 1 : i64} : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<5x2xf32>
  %1 = hps.onnx_node "Gather"(%x, %j) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<5x2xf32>
  // CHECK: hps.gather %arg1, %arg2 : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<2x6xf32>
  %2 = hps.onnx_node "Gather"(%x, %j) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<2x6xf32>
  return %0, %1, %2 : tensor<4x3x8xf32>, tensor<5x2xf32>, tensor<2x6xf32>
}
