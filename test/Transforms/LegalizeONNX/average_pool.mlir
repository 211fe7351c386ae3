// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-9: count_include_pad (default 0: pads are not counted).
// CHECK-LABEL: func @average_pool_7
func.func @average_pool_7(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>, tensor<1x1x4x4xf32>) {
  // SAME_UPPER: kernel 3, stride 1 -> pads 1 on each side.
  // CHECK: hps.avg_pool %arg0 {count_include_pad, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 3, 3>, auto_pad = "SAME_UPPER", count_include_pad = 1 : i64}, domain = "", opset = 7 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  // CHECK: hps.avg_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  %1 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}, domain = "", opset = 9 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  // CHECK: hps.avg_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x4x4xf32>
  %2 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, count_include_pad = 0 : i64}, domain = "", opset = 8 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x4x4xf32>
  return %0, %1, %2 : tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>, tensor<1x1x4x4xf32>
}

// -----

// ceil_mode only exists from opset 10.
// CHECK-LABEL: func @average_pool_9_ceil
func.func @average_pool_9_ceil(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // CHECK: hps.onnx_node "AveragePool"
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}, domain = "", opset = 9 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// Opset 10: ceil_mode.
// CHECK-LABEL: func @average_pool_10
func.func @average_pool_10(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: hps.avg_pool %arg0 {ceil_mode, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // CHECK: hps.avg_pool %arg0 {count_include_pad, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  %1 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>
}

// -----

// Opsets 11-17: SAME_LOWER, VALID, 1-D.
// CHECK-LABEL: func @average_pool_11
func.func @average_pool_11(%x: tensor<1x1x6x6xf32>, %l: tensor<1x4x9xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x4x3xf32>) {
  // Input 6, kernel 3, stride 2: output 3, total pad 1, at the beginning.
  // CHECK: hps.avg_pool %arg0 {ceil_mode, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32>
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {auto_pad = "SAME_LOWER", ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32>
  // CHECK: hps.avg_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x2x2xf32>
  %1 = hps.onnx_node "AveragePool"(%x) {attrs = {auto_pad = "VALID", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}, domain = "", opset = 17 : i64} : (tensor<1x1x6x6xf32>) -> tensor<1x1x2x2xf32>
  // CHECK: hps.avg_pool %arg1 {dilations = array<i64: 1>, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 3>} : (tensor<1x4x9xf32>) -> tensor<1x4x3xf32>
  %2 = hps.onnx_node "AveragePool"(%l) {attrs = {kernel_shape = array<i64: 3>, strides = array<i64: 3>}, domain = "", opset = 13 : i64} : (tensor<1x4x9xf32>) -> tensor<1x4x3xf32>
  return %0, %1, %2 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x4x3xf32>
}

// -----

// Stays generic: dilations (AveragePool-19), count_include_pad not 0/1,
// SAME over a dynamic extent.
// CHECK-LABEL: func @average_pool_generic
func.func @average_pool_generic(%x: tensor<1x1x5x5xf32>, %d: tensor<1x1x?x?xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x4x4xf32>, tensor<1x1x?x?xf32>) {
  // CHECK: hps.onnx_node "AveragePool"(%arg0) {attrs = {dilations
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>}, domain = "", opset = 17 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // CHECK: hps.onnx_node "AveragePool"(%arg0) {attrs = {count_include_pad = 3
  %1 = hps.onnx_node "AveragePool"(%x) {attrs = {count_include_pad = 3 : i64, kernel_shape = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x4x4xf32>
  // CHECK: hps.onnx_node "AveragePool"(%arg1)
  %2 = hps.onnx_node "AveragePool"(%d) {attrs = {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32>
  return %0, %1, %2 : tensor<1x1x3x3xf32>, tensor<1x1x4x4xf32>, tensor<1x1x?x?xf32>
}

// -----

// Opset 19: dilations.
// CHECK-LABEL: func @average_pool_19_dilations
func.func @average_pool_19_dilations(%x: tensor<1x1x7x7xf32>) -> tensor<1x1x3x5xf32> {
  // CHECK: hps.avg_pool %arg0 {dilations = array<i64: 2, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x7x7xf32>) -> tensor<1x1x3x5xf32>
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 1>}, domain = "", opset = 19 : i64} : (tensor<1x1x7x7xf32>) -> tensor<1x1x3x5xf32>
  return %0 : tensor<1x1x3x5xf32>
}

// -----

// dilations are opset 19's: at 18 the node stays generic.
// CHECK-LABEL: func @average_pool_18_dilations
func.func @average_pool_18_dilations(%x: tensor<1x1x7x7xf32>) -> tensor<1x1x3x5xf32> {
  // CHECK: hps.onnx_node "AveragePool"
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 1>}, domain = "", opset = 18 : i64} : (tensor<1x1x7x7xf32>) -> tensor<1x1x3x5xf32>
  return %0 : tensor<1x1x3x5xf32>
}
