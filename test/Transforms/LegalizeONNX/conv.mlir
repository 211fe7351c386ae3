// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Defaults: strides and dilations 1, no padding, group 1 (elided), kernel
// from the filter; the bias is optional.
// CHECK-LABEL: func @defaults
func.func @defaults(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  // CHECK: hps.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %0 = hps.onnx_node "Conv"(%x, %w, %b) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = hps.onnx_node "Conv"(%x, %w) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Opsets 1-10: explicit pads (begins, then ends), strides, kernel_shape.
// CHECK-LABEL: func @explicit_7
func.func @explicit_7(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x3xf32> {
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x3xf32>
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>}, domain = "", opset = 10 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning:
// input 7, kernel 4, stride 2 -> output ceil(7/2) = 4, total padding 3.
// CHECK-LABEL: func @same
func.func @same(%x: tensor<1x1x7x7xf32>, %w: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x7x7xf32>) {
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 2, 2>, strides = array<i64: 2, 2>}
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>, kernel_shape = array<i64: 4, 4>}, domain = "", opset = 8 : i64} : (tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 2, 2, 1, 1>, strides = array<i64: 2, 2>}
  %1 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_LOWER", strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // Stride 1 with dilation 2: extent 7, total padding 6; given pads are
  // ignored.
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 1, 1>}
  %2 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_UPPER", dilations = array<i64: 2, 2>, pads = array<i64: 9, 9, 9, 9>}, domain = "", opset = 13 : i64} : (tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x7x7xf32>
  return %0, %1, %2 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x7x7xf32>
}

// -----

// VALID zeroes the pads; NOTSET keeps them; groups and dilations pass through.
// CHECK-LABEL: func @valid_grouped
func.func @valid_grouped(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %dw: tensor<4x1x3x3xf32>) -> (tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>, tensor<2x4x9x9xf32>) {
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "VALID", group = 2 : i64, pads = array<i64: 1, 1, 1, 1>}, domain = "", opset = 11 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
  %1 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "NOTSET", dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  // Depthwise.
  // CHECK: hps.conv %arg0, %arg2 {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
  %2 = hps.onnx_node "Conv"(%x, %dw) {attrs = {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>}, domain = "", opset = 7 : i64} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x9x9xf32>
  return %0, %1, %2 : tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>, tensor<2x4x9x9xf32>
}

// -----

// 1-D and 3-D convolutions; a dynamic batch and spatial extents are fine
// with explicit pads.
// CHECK-LABEL: func @ranks
func.func @ranks(%x: tensor<1x2x10xf32>, %w: tensor<3x2x3xf32>, %v: tensor<1x1x4x4x4xf32>, %k: tensor<1x1x2x2x2xf32>, %d: tensor<?x2x?xf32>) -> (tensor<1x3x5xf32>, tensor<1x1x3x3x3xf32>, tensor<?x3x?xf32>) {
  // CHECK: hps.conv %arg0, %arg1 {dilations = array<i64: 1>, pads = array<i64: 1, 0>, strides = array<i64: 2>} : (tensor<1x2x10xf32>, tensor<3x2x3xf32>) -> tensor<1x3x5xf32>
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {pads = array<i64: 1, 0>, strides = array<i64: 2>}, domain = "", opset = 11 : i64} : (tensor<1x2x10xf32>, tensor<3x2x3xf32>) -> tensor<1x3x5xf32>
  // CHECK: hps.conv %arg2, %arg3 {dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x1x4x4x4xf32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x3x3x3xf32>
  %1 = hps.onnx_node "Conv"(%v, %k) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<1x1x4x4x4xf32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x3x3x3xf32>
  // CHECK: hps.conv %arg4, %arg1 {{.*}} : (tensor<?x2x?xf32>, tensor<3x2x3xf32>) -> tensor<?x3x?xf32>
  %2 = hps.onnx_node "Conv"(%d, %w) {attrs = {auto_pad = "VALID"}, domain = "", opset = 11 : i64} : (tensor<?x2x?xf32>, tensor<3x2x3xf32>) -> tensor<?x3x?xf32>
  return %0, %1, %2 : tensor<1x3x5xf32>, tensor<1x1x3x3x3xf32>, tensor<?x3x?xf32>
}

// -----

// Stays generic: SAME padding of a dynamic spatial extent, an unknown
// auto_pad, a kernel_shape that contradicts the filter, pads of the wrong
// arity, channels that do not match the filter times group.
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<1x1x?x8xf32>, %s: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x?x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>) {
  // CHECK: hps.onnx_node "Conv"(%arg0, %arg2) {attrs = {auto_pad = "SAME_UPPER"}
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_UPPER"}, domain = "", opset = 11 : i64} : (tensor<1x1x?x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x?x8xf32>
  // CHECK: hps.onnx_node "Conv"(%arg1, %arg2) {attrs = {auto_pad = "SAME"}
  %1 = hps.onnx_node "Conv"(%s, %w) {attrs = {auto_pad = "SAME"}, domain = "", opset = 11 : i64} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32>
  // CHECK: hps.onnx_node "Conv"(%arg1, %arg2) {attrs = {kernel_shape = array<i64: 2, 2>}
  %2 = hps.onnx_node "Conv"(%s, %w) {attrs = {kernel_shape = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  // CHECK: hps.onnx_node "Conv"(%arg1, %arg2) {attrs = {pads = array<i64: 0, 0>}
  %3 = hps.onnx_node "Conv"(%s, %w) {attrs = {pads = array<i64: 0, 0>}, domain = "", opset = 11 : i64} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  // CHECK: hps.onnx_node "Conv"(%arg1, %arg2) {attrs = {group = 2 : i64}
  %4 = hps.onnx_node "Conv"(%s, %w) {attrs = {group = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32>
  return %0, %1, %2, %3, %4 : tensor<1x1x?x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>
}
