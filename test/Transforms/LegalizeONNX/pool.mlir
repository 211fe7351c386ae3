// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @max_pool
func.func @max_pool(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  // Opset 8: floor mode, storage_order has no effect on values.
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, storage_order = 1 : i64}, domain = "", opset = 8 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  // Opset 10+: ceil mode and dilations.
  // CHECK: hps.max_pool %arg0 {ceil_mode, {{.*}}strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %1 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>
  %2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0, %1, %2 : tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A used Indices output keeps the node generic; an unused one does not.
// CHECK-LABEL: func @indices
func.func @indices(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<1x1x2x2xf32>) {
  // CHECK: hps.onnx_node "MaxPool"
  %0:2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  // CHECK: hps.max_pool
  %1:2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %0#0, %0#1, %1#0 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<1x1x2x2xf32>
}

// -----

// CHECK-LABEL: func @average_pool
func.func @average_pool(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) {
  // SAME_UPPER pooling: kernel 3, stride 1 -> pads 1 on each side.
  // CHECK: hps.avg_pool %arg0 {count_include_pad, {{.*}}pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  %0 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 3, 3>, auto_pad = "SAME_UPPER", count_include_pad = 1 : i64}, domain = "", opset = 7 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  // CHECK: hps.avg_pool %arg0 {ceil_mode, {{.*}}strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %1 = hps.onnx_node "AveragePool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0, %1 : tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>
}

// -----

// CHECK-LABEL: func @global
func.func @global(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) {
  // CHECK: hps.global_avg_pool %arg0 : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %0 = hps.onnx_node "GlobalAveragePool"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  // CHECK: hps.global_max_pool %arg0 : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %1 = hps.onnx_node "GlobalMaxPool"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  return %0, %1 : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>
}
