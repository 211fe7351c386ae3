// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Col2Im (18): [N, C*K, L] blocks viewed as [N, C*K, L_h, L_w], folded by a
// transposed conv in C groups with one-hot [K, 1, block] filters.
// CHECK-LABEL: func @col2im_groups
func.func @col2im_groups(%x: tensor<2x8x12xf32>) -> tensor<2x2x4x5xf32> {
  %i = hps.constant dense<[4, 5]> : tensor<2xi64>
  %b = hps.constant dense<[2, 2]> : tensor<2xi64>
  // CHECK: %[[F:.*]] = hps.constant dense<{{.*}}> : tensor<8x1x2x2xf32>
  // CHECK: %[[V:.*]] = hps.reshape %arg0 {shape = array<i64: 2, 8, 3, 4>}
  // CHECK: hps.conv_grad_input %[[V]], %[[F]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x3x4xf32>, tensor<8x1x2x2xf32>) -> tensor<2x2x4x5xf32>
  %0 = hps.onnx_node "Col2Im"(%x, %i, %b) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<2x8x12xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x4x5xf32>
  return %0 : tensor<2x2x4x5xf32>
}

// -----

// Strides, pads and dilations carry over; a stride remainder (the blocks
// stop short of the image's end) is output padding.
// CHECK-LABEL: func @col2im_strided
func.func @col2im_strided(%x: tensor<1x9x9xf32>) -> tensor<1x1x8x8xf32> {
  %i = hps.constant dense<[8, 8]> : tensor<2xi64>
  %b = hps.constant dense<[3, 3]> : tensor<2xi64>
  // CHECK: hps.reshape %arg0 {shape = array<i64: 1, 9, 3, 3>}
  // CHECK: hps.conv_grad_input {{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x9x3x3xf32>, tensor<9x1x3x3xf32>) -> tensor<1x1x8x8xf32>
  %0 = hps.onnx_node "Col2Im"(%x, %i, %b) {attrs = {strides = array<i64: 2, 2>}, domain = "", opset = 18 : i64} : (tensor<1x9x9xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

// L must count the block positions; otherwise the node stays generic.
// CHECK-LABEL: func @col2im_wrong_positions
func.func @col2im_wrong_positions(%x: tensor<1x4x5xf32>) -> tensor<1x1x3x3xf32> {
  %i = hps.constant dense<[3, 3]> : tensor<2xi64>
  %b = hps.constant dense<[2, 2]> : tensor<2xi64>
  // CHECK: hps.onnx_node "Col2Im"
  %0 = hps.onnx_node "Col2Im"(%x, %i, %b) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<1x4x5xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
