// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Defaults: strides and dilations 1, no padding, kernel from the filter.
// CHECK-LABEL: func @defaults
func.func @defaults(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: hps.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %0 = hps.onnx_node "Conv"(%x, %w, %b) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning:
// input 7, kernel 4, stride 2 -> output 4, total padding 3.
// CHECK-LABEL: func @same
func.func @same(%x: tensor<1x1x7x7xf32>, %w: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  // CHECK: hps.conv {{.*}}pads = array<i64: 1, 1, 2, 2>, strides = array<i64: 2, 2>
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>, kernel_shape = array<i64: 4, 4>}, domain = "", opset = 8 : i64} : (tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  // CHECK: hps.conv {{.*}}pads = array<i64: 2, 2, 1, 1>, strides = array<i64: 2, 2>
  %1 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_LOWER", strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %0, %1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// VALID ignores pads; groups, dilations and explicit pads pass through.
// CHECK-LABEL: func @valid_grouped
func.func @valid_grouped(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) -> (tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>) {
  // CHECK: hps.conv {{.*}}group = 2 : i64, pads = array<i64: 0, 0, 0, 0>
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "VALID", group = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  // CHECK: hps.conv {{.*}}dilations = array<i64: 2, 2>, {{.*}}group = 2 : i64, pads = array<i64: 1, 1, 1, 1>
  %1 = hps.onnx_node "Conv"(%x, %w) {attrs = {dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x7x7xf32>
  return %0, %1 : tensor<2x8x7x7xf32>, tensor<2x8x7x7xf32>
}

// -----

// 1-D and 3-D convolutions.
// CHECK-LABEL: func @ranks
func.func @ranks(%x: tensor<1x2x10xf32>, %w: tensor<3x2x3xf32>, %v: tensor<1x1x4x4x4xf32>, %k: tensor<1x1x2x2x2xf32>) -> (tensor<1x3x8xf32>, tensor<1x1x3x3x3xf32>) {
  // CHECK: hps.conv {{.*}} : (tensor<1x2x10xf32>, tensor<3x2x3xf32>) -> tensor<1x3x8xf32>
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<1x2x10xf32>, tensor<3x2x3xf32>) -> tensor<1x3x8xf32>
  // CHECK: hps.conv {{.*}}strides = array<i64: 1, 1, 1>} : (tensor<1x1x4x4x4xf32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x3x3x3xf32>
  %1 = hps.onnx_node "Conv"(%v, %k) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<1x1x4x4x4xf32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x3x3x3xf32>
  return %0, %1 : tensor<1x3x8xf32>, tensor<1x1x3x3x3xf32>
}

// -----

// SAME padding of a dynamic spatial extent cannot be resolved statically.
// CHECK-LABEL: func @dynamic_same
func.func @dynamic_same(%x: tensor<1x1x?x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x?x8xf32> {
  // CHECK: hps.onnx_node "Conv"
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {auto_pad = "SAME_UPPER"}, domain = "", opset = 11 : i64} : (tensor<1x1x?x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x?x8xf32>
  return %0 : tensor<1x1x?x8xf32>
}
