// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// ConvTranspose (opsets 6-17) is conv_grad_input: X is the gradient of a
// forward conv from M = W[1] x group channels to C = W[0], with the same
// strides, pads and dilations; out = s (in - 1) + output_padding +
// d (k - 1) + 1 - pads. The bias is added per output channel.
// CHECK-LABEL: func @conv_transpose
func.func @conv_transpose(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>, %wg: tensor<4x1x3x3xf32>, %x1: tensor<2x4x7xf32>, %w1: tensor<4x2x2xf32>) -> (tensor<1x3x10x10xf32>, tensor<1x3x9x9xf32>, tensor<1x3x12x12xf32>, tensor<1x2x7x7xf32>, tensor<2x2x14xf32>) {
  // CHECK: %[[T:.*]] = hps.conv_grad_input %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  // CHECK: %[[B:.*]] = hps.reshape %arg2 {shape = array<i64: 3, 1, 1>} : (tensor<3xf32>) -> tensor<3x1x1xf32>
  // CHECK: %[[A:.*]] = hps.add %[[T]], %[[B]]
  %0 = hps.onnx_node "ConvTranspose"(%x, %w, %b) {attrs = {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x10x10xf32>
  // output_shape 9: the excess 2 (4 - 1) + 3 - 9 = 2 becomes pads 1 and 1.
  // CHECK: %[[S:.*]] = hps.conv_grad_input %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32>
  // CHECK: %[[SR:.*]] = hps.relu %[[S]]
  %s = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {strides = array<i64: 2, 2>, output_shape = array<i64: 9, 9>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %1 = hps.onnx_node "Relu"(%s) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<?x?x?x?xf32>) -> tensor<1x3x9x9xf32>
  // output_shape 12: one row short of the stride, output padding at the end.
  // CHECK: %[[P:.*]] = hps.conv_grad_input %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x12x12xf32>
  %p = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {strides = array<i64: 2, 2>, output_shape = array<i64: 12, 12>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x12x12xf32>
  // Grouped: M = 1 x 2 output channels.
  // CHECK: %[[G:.*]] = hps.conv_grad_input %arg0, %arg3 {{.*}}group = 2{{.*}} -> tensor<1x2x7x7xf32>
  %2 = hps.onnx_node "ConvTranspose"(%x, %wg) {attrs = {group = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x2x7x7xf32>
  // One spatial axis, dilation 2: 2 (7 - 1) + 2 (2 - 1) + 1 - 1 = 14.
  // CHECK: %[[D:.*]] = hps.conv_grad_input %arg4, %arg5 {dilations = array<i64: 2>, pads = array<i64: 0, 1>, strides = array<i64: 2>} : (tensor<2x4x7xf32>, tensor<4x2x2xf32>) -> tensor<2x2x14xf32>
  %3 = hps.onnx_node "ConvTranspose"(%x1, %w1) {attrs = {strides = array<i64: 2>, dilations = array<i64: 2>, pads = array<i64: 0, 1>}, domain = "", opset = 6 : i64} : (tensor<2x4x7xf32>, tensor<4x2x2xf32>) -> tensor<2x2x14xf32>
  // CHECK: return %[[A]], %[[SR]], %[[P]], %[[G]], %[[D]]
  return %0, %1, %p, %2, %3 : tensor<1x3x10x10xf32>, tensor<1x3x9x9xf32>, tensor<1x3x12x12xf32>, tensor<1x2x7x7xf32>, tensor<2x2x14xf32>
}

// -----

// SAME_UPPER and SAME_LOWER give in * stride; the odd unit of the excess
// padding (11 - 10 here) goes to the end with UPPER, to the start with
// LOWER, as onnxruntime and ONNX's reference put it.
// CHECK-LABEL: func @conv_transpose_same
func.func @conv_transpose_same(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<1x3x10x10xf32>, tensor<1x3x10x10xf32>) {
  // CHECK: hps.conv_grad_input %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  %0 = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  // CHECK: hps.conv_grad_input %arg0, %arg1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  %1 = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {auto_pad = "SAME_LOWER", strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return %0, %1 : tensor<1x3x10x10xf32>, tensor<1x3x10x10xf32>
}

// -----

// Stays generic: SAME_UPPER where in * stride exceeds the full output
// (stride 3, kernel 2: onnxruntime gives 14, ONNX's reference 15),
// output_padding not below the stride, an output_shape that would need
// negative pads.
// CHECK-LABEL: func @conv_transpose_generic
func.func @conv_transpose_generic(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %w2: tensor<4x3x2x2xf32>) -> (tensor<1x3x15x15xf32>, tensor<1x3x12x12xf32>, tensor<1x3x20x20xf32>, tensor<1x3x10x10xf32>) {
  // CHECK: hps.onnx_node "ConvTranspose"{{.*}}auto_pad = "SAME_UPPER"
  %0 = hps.onnx_node "ConvTranspose"(%x, %w2) {attrs = {auto_pad = "SAME_UPPER", strides = array<i64: 3, 3>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>) -> tensor<1x3x15x15xf32>
  // CHECK: hps.onnx_node "ConvTranspose"{{.*}}output_padding
  %1 = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x12x12xf32>
  // CHECK: hps.onnx_node "ConvTranspose"{{.*}}output_shape
  %2 = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {strides = array<i64: 2, 2>, output_shape = array<i64: 20, 20>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x20x20xf32>
  // CHECK: hps.onnx_node "ConvTranspose"{{.*}}output_shape = array<i64: 10, 10>
  %3 = hps.onnx_node "ConvTranspose"(%x, %w) {attrs = {strides = array<i64: 2, 2>, output_shape = array<i64: 10, 10>}, domain = "", opset = 11 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return %0, %1, %2, %3 : tensor<1x3x15x15xf32>, tensor<1x3x12x12xf32>, tensor<1x3x20x20xf32>, tensor<1x3x10x10xf32>
}
