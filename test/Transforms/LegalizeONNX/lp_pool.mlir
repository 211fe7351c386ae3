// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// LpPool: |x|^p summed per window by a depthwise conv with a ones filter
// (pads add zeros), then the p-th root; p = 2 is x * x and sqrt.
// CHECK-LABEL: func @lp_pool
func.func @lp_pool(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK-DAG: %[[ONES:.*]] = hps.constant dense<1.000000e+00> : tensor<2x1x3x3xf32>
  // CHECK-DAG: %[[SQ:.*]] = hps.mul %arg0, %arg0
  // CHECK: %[[SUM:.*]] = hps.conv %[[SQ]], %[[ONES]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  // CHECK: hps.sqrt %[[SUM]] : tensor<1x2x3x3xf32>
  %0 = hps.onnx_node "LpPool"(%x) {attrs = {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// p = 3: pow of |x|, pow(1/3) of the sums; 18's dilations carry over.
// CHECK-LABEL: func @lp_pool_18
func.func @lp_pool_18(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> {
  // CHECK: %[[ABS:.*]] = hps.abs %arg0
  // CHECK: %[[POW:.*]] = hps.pow %[[ABS]], %{{.*}}
  // CHECK: %[[SUM:.*]] = hps.conv %[[POW]], %{{.*}} {dilations = array<i64: 2, 2>,
  // CHECK: hps.pow %[[SUM]], %{{.*}} : tensor<1x1x4x4xf32>, tensor<f32> -> tensor<1x1x4x4xf32>
  %0 = hps.onnx_node "LpPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>, p = 3 : i64}, domain = "", opset = 18 : i64} : (tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// A ceil_mode that adds a window stays generic (the sum would need the
// clipped window).
// CHECK-LABEL: func @lp_pool_ceil
func.func @lp_pool_ceil(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // CHECK: hps.onnx_node "LpPool"
  %0 = hps.onnx_node "LpPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// GlobalLpPool: hps.reduce over the spatial axes (L2 for p = 2).
// CHECK-LABEL: func @global_lp_pool
func.func @global_lp_pool(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32> {
  // CHECK: hps.reduce  l2 %arg0 {axes = array<i64: 2, 3>, keepdims} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %0 = hps.onnx_node "GlobalLpPool"(%x) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  return %0 : tensor<2x3x1x1xf32>
}
