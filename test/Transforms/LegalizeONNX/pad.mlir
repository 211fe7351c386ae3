// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 2-10: pads, mode and value attributes (defaults constant, 0).
// CHECK-LABEL: func @pad_7
func.func @pad_7(%x: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<2x5xf32>) {
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: 1, 0, 1, 0>, value = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  %0 = hps.onnx_node "Pad"(%x) {attrs = {pads = array<i64: 1, 0, 1, 0>, value = 0.5 : f32}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode edge>, pads = array<i64: 0, 1, 0, 1>, value = 0.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = hps.onnx_node "Pad"(%x) {attrs = {mode = "edge", pads = array<i64: 0, 1, 0, 1>}, domain = "", opset = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<2x5xf32>
}

// -----

// Opset 11+: pads and the optional constant_value are constant inputs.
// CHECK-LABEL: func @pad_11
func.func @pad_11(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x5xf32>, tensor<2x7xi32>, tensor<2x2xf32>, tensor<3x3xf32>) {
  %p = hps.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode reflect>, pads = array<i64: 0, 1, 0, 1>, value = 0.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  %0 = hps.onnx_node "Pad"(%x, %p) {attrs = {mode = "reflect"}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x5xf32>
  %q = hps.constant dense<[0, 2, 0, 2]> : tensor<4xi64>
  %v = hps.constant dense<7> : tensor<i32>
  // CHECK: hps.pad %arg1 {mode = #hps<pad_mode constant>, pads = array<i64: 0, 2, 0, 2>, value = 7 : i32} : (tensor<2x3xi32>) -> tensor<2x7xi32>
  %1 = hps.onnx_node "Pad"(%i, %q, %v) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3xi32>, tensor<4xi64>, tensor<i32>) -> tensor<2x7xi32>
  // Negative pads crop.
  %r = hps.constant dense<[0, 0, 0, -1]> : tensor<4xi64>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 0, -1>, value = 0.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  %2 = hps.onnx_node "Pad"(%x, %r) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x2xf32>
  %s = hps.constant dense<[1, 0, 0, 0]> : tensor<4xi64>
  %none = hps.none
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode edge>, pads = array<i64: 1, 0, 0, 0>, value = 0.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  %3 = hps.onnx_node "Pad"(%x, %s, %none) {attrs = {mode = "edge"}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>, none) -> tensor<3x3xf32>
  return %0, %1, %2, %3 : tensor<2x5xf32>, tensor<2x7xi32>, tensor<2x2xf32>, tensor<3x3xf32>
}

// -----

// Stays generic: pads or constant_value not constant, an unknown mode
// (wrap is opset 19), the attribute form at opset 11, pads of the wrong
// arity.
// CHECK-LABEL: func @pad_generic
func.func @pad_generic(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<f32>) -> (tensor<?x?xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %q = hps.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
  %short = hps.constant dense<[1, 1]> : tensor<2xi64>
  // CHECK: hps.onnx_node "Pad"(%arg0, %arg1)
  %0 = hps.onnx_node "Pad"(%x, %p) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  // CHECK: hps.onnx_node "Pad"(%arg0, %{{.*}}, %arg2)
  %1 = hps.onnx_node "Pad"(%x, %q, %v) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<2x5xf32>
  // CHECK: hps.onnx_node "Pad"(%arg0, %{{.*}}) {attrs = {mode = "wrap"}
  %2 = hps.onnx_node "Pad"(%x, %q) {attrs = {mode = "wrap"}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x5xf32>
  // CHECK: hps.onnx_node "Pad"(%arg0, %{{.*}}) {attrs = {value = 1.000000e+00 : f32}
  %3 = hps.onnx_node "Pad"(%x, %q) {attrs = {value = 1.0 : f32}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x5xf32>
  // CHECK: hps.onnx_node "Pad"(%arg0, %{{.*}}) {attrs = {}
  %4 = hps.onnx_node "Pad"(%x, %short) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Opset 18: an optional constant axes input says which axes pads covers
// (negative axes count from the end); without it, pads covers every axis.
// CHECK-LABEL: func @pad_18
func.func @pad_18(%x: tensor<2x3x4xf32>) -> (tensor<2x6x4xf32>, tensor<2x3x5xf32>) {
  %p = hps.constant dense<[1, 2]> : tensor<2xi64>
  %a = hps.constant dense<[-2]> : tensor<1xi32>
  %none = hps.none
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode reflect>, pads = array<i64: 0, 1, 0, 0, 2, 0>, value = 0.000000e+00 : f32} : (tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  %0 = hps.onnx_node "Pad"(%x, %p, %none, %a) {attrs = {mode = "reflect"}, domain = "", opset = 18 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>, none, tensor<1xi32>) -> tensor<2x6x4xf32>
  %q = hps.constant dense<[0, 0, 1, 0, 0, 0]> : tensor<6xi64>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 1, 0, 0, 0>, value = 0.000000e+00 : f32} : (tensor<2x3x4xf32>) -> tensor<2x3x5xf32>
  %1 = hps.onnx_node "Pad"(%x, %q) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x3x5xf32>
  return %0, %1 : tensor<2x6x4xf32>, tensor<2x3x5xf32>
}

// -----

// An axes input before opset 18 has no meaning: the node stays generic.
// CHECK-LABEL: func @pad_17_axes
func.func @pad_17_axes(%x: tensor<2x3x4xf32>) -> tensor<2x6x4xf32> {
  %p = hps.constant dense<[1, 2]> : tensor<2xi64>
  %a = hps.constant dense<[1]> : tensor<1xi64>
  %none = hps.none
  // CHECK: hps.onnx_node "Pad"
  %0 = hps.onnx_node "Pad"(%x, %p, %none, %a) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

// CenterCropPad (18): each listed axis cropped or zero-padded to the
// target, centred, the odd element at the end: one pad, negative to crop.
// CHECK-LABEL: func @center_crop_pad
func.func @center_crop_pad(%x: tensor<5x6x3xf32>) -> tensor<2x9x3xf32> {
  %s = hps.constant dense<[9, 2]> : tensor<2xi64>
  // CHECK: hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: -1, 1, 0, -2, 2, 0>, value = 0.000000e+00 : f32} : (tensor<5x6x3xf32>) -> tensor<2x9x3xf32>
  %0 = hps.onnx_node "CenterCropPad"(%x, %s) {attrs = {axes = array<i64: 1, 0>}, domain = "", opset = 18 : i64} : (tensor<5x6x3xf32>, tensor<2xi64>) -> tensor<2x9x3xf32>
  return %0 : tensor<2x9x3xf32>
}

// -----

// Opset 19's wrap mode: crops by hps.slice, then the axis's last `begin` and
// first `end` elements copied around it by hps.slice and hps.concat.
// CHECK-LABEL: func @pad_19_wrap
func.func @pad_19_wrap(%x: tensor<2x5xf32>) -> tensor<2x6xf32> {
  %p = hps.constant dense<[0, 2, 0, -1]> : tensor<4xi64>
  // CHECK: %[[CROP:.*]] = hps.slice %arg0 {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2x4xf32>
  // CHECK: %[[TAIL:.*]] = hps.slice %[[CROP]] {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 2>, steps = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  // CHECK: hps.concat %[[TAIL]], %[[CROP]] {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  %0 = hps.onnx_node "Pad"(%x, %p) {attrs = {mode = "wrap"}, domain = "", opset = 19 : i64} : (tensor<2x5xf32>, tensor<4xi64>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// wrap is opset 19's: at 18 the node stays generic.
// CHECK-LABEL: func @pad_18_wrap
func.func @pad_18_wrap(%x: tensor<2x5xf32>) -> tensor<2x7xf32> {
  %p = hps.constant dense<[0, 2, 0, 0]> : tensor<4xi64>
  // CHECK: hps.onnx_node "Pad"
  %0 = hps.onnx_node "Pad"(%x, %p) {attrs = {mode = "wrap"}, domain = "", opset = 18 : i64} : (tensor<2x5xf32>, tensor<4xi64>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}
