// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// LRN (opsets 1-17): x * (bias + alpha * mean)^-beta, where mean is the
// average of x^2 over `size` channels (floor((size-1)/2) before, the rest
// after; pads counted), an avg_pool of x^2 viewed as [N, 1, C, H*W].
// CHECK-LABEL: func @lrn
func.func @lrn(%x: tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> {
  // CHECK-DAG: %[[ALPHA:.*]] = hps.constant dense<2.000000e-04> : tensor<f32>
  // CHECK-DAG: %[[BIAS:.*]] = hps.constant dense<2.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[BETA:.*]] = hps.constant dense<-5.000000e-01> : tensor<f32>
  // CHECK: %[[SQ:.*]] = hps.mul %arg0, %arg0
  // CHECK: %[[V:.*]] = hps.reshape %[[SQ]] {shape = array<i64: 2, 1, 5, 12>}
  // CHECK: %[[P:.*]] = hps.avg_pool %[[V]] {count_include_pad, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 4, 1>, pads = array<i64: 1, 0, 2, 0>, strides = array<i64: 1, 1>}
  // CHECK: %[[A:.*]] = hps.mul %[[P]], %[[ALPHA]]
  // CHECK: %[[B:.*]] = hps.add %[[A]], %[[BIAS]]
  // CHECK: %[[F:.*]] = hps.pow %[[B]], %[[BETA]]
  // CHECK: %[[R:.*]] = hps.reshape %[[F]] {shape = array<i64: 2, 5, 3, 4>}
  // CHECK: %[[Y:.*]] = hps.mul %arg0, %[[R]]
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "LRN"(%x) {attrs = {alpha = 2.0e-4 : f32, beta = 0.5 : f32, bias = 2.0 : f32, size = 4 : i64}, domain = "", opset = 13 : i64} : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32>
  return %0 : tensor<2x5x3x4xf32>
}

// -----

// Stays generic: no size; a dynamic shape.
// CHECK-LABEL: func @lrn_generic
func.func @lrn_generic(%x: tensor<2x5x3x4xf32>, %d: tensor<?x5x3x4xf32>) -> (tensor<2x5x3x4xf32>, tensor<?x5x3x4xf32>) {
  // CHECK: hps.onnx_node "LRN"
  %0 = hps.onnx_node "LRN"(%x) {attrs = {alpha = 2.0e-4 : f32}, domain = "", opset = 13 : i64} : (tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32>
  // CHECK: hps.onnx_node "LRN"
  %1 = hps.onnx_node "LRN"(%d) {attrs = {size = 3 : i64}, domain = "", opset = 13 : i64} : (tensor<?x5x3x4xf32>) -> tensor<?x5x3x4xf32>
  return %0, %1 : tensor<2x5x3x4xf32>, tensor<?x5x3x4xf32>
}
