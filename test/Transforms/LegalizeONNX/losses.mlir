// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// NegativeLogLikelihoodLoss (12-17): the target's class picked by one
// gather of the flattened input at target * stride + a constant offset,
// negated; "mean" without weights is a mean over every element.
// CHECK-LABEL: func @nll_mean
func.func @nll_mean(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> tensor<f32> {
  // CHECK-DAG: %[[BASE:.*]] = hps.constant dense<{{\[\[}}0], [5], [10]]> : tensor<3x1xi64>
  // CHECK: %[[T:.*]] = hps.reshape %arg1 {shape = array<i64: 3, 1>}
  // CHECK: %[[POS:.*]] = hps.add %{{.*}}, %[[BASE]] : tensor<3x1xi64>
  // A class out of range goes past the end, where the gather reports it.
  // CHECK: %[[SAFE:.*]] = hps.where %{{.*}}, %[[POS]], %{{.*}} : (tensor<3x1xi1>, tensor<3x1xi64>, tensor<i64>)
  // CHECK: %[[FLAT:.*]] = hps.reshape %arg0 {shape = array<i64: 15>}
  // CHECK: %[[PICK:.*]] = hps.gather %[[FLAT]], %[[SAFE]]
  // CHECK: %[[ROW:.*]] = hps.reshape %[[PICK]] {shape = array<i64: 3>}
  // CHECK: %[[NEG:.*]] = hps.neg %[[ROW]] : tensor<3xf32>
  // CHECK: %[[MEAN:.*]] = hps.reduce  mean %[[NEG]] {axes = array<i64>} : (tensor<3xf32>) -> tensor<f32>
  // CHECK: return %[[MEAN]]
  %0 = hps.onnx_node "NegativeLogLikelihoodLoss"(%x, %t) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Weights are gathered by the target; ignore_index zeroes the weight (and
// reads class 0 instead); "mean" divides by the weights applied.
// CHECK-LABEL: func @nll_weighted_ignore
func.func @nll_weighted_ignore(%x: tensor<2x4x3xf32>, %t: tensor<2x3xi64>, %w: tensor<4xf32>) -> (tensor<f32>, tensor<2x3xf32>, tensor<f32>) {
  // CHECK: %[[IGN:.*]] = hps.equal %arg1, %{{.*}} : tensor<2x3xi64>, tensor<i64> -> tensor<2x3xi1>
  // CHECK: %[[SAFE:.*]] = hps.where %[[IGN]], %{{.*}}, %arg1
  // CHECK: %[[PICK:.*]] = hps.gather
  // CHECK: %[[W:.*]] = hps.gather %arg2, %[[SAFE]] : (tensor<4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  // CHECK: %[[WM:.*]] = hps.where %[[IGN]], %{{.*}}, %[[W]]
  // CHECK: %[[PROD:.*]] = hps.mul %{{.*}}, %[[WM]]
  // CHECK: %[[LOSS:.*]] = hps.neg %[[PROD]]
  // CHECK: %[[SUM:.*]] = hps.reduce  sum %[[LOSS]]
  // CHECK: %[[WSUM:.*]] = hps.reduce  sum %[[WM]]
  // CHECK: hps.div %[[SUM]], %[[WSUM]]
  %0 = hps.onnx_node "NegativeLogLikelihoodLoss"(%x, %t, %w) {attrs = {ignore_index = -1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x4x3xf32>, tensor<2x3xi64>, tensor<4xf32>) -> tensor<f32>
  // CHECK: %[[NONE:.*]] = hps.neg %{{.*}} : tensor<2x3xf32>
  %1 = hps.onnx_node "NegativeLogLikelihoodLoss"(%x, %t) {attrs = {reduction = "none"}, domain = "", opset = 12 : i64} : (tensor<2x4x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  // CHECK: hps.reduce  sum %{{.*}} {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
  %2 = hps.onnx_node "NegativeLogLikelihoodLoss"(%x, %t, %w) {attrs = {reduction = "sum"}, domain = "", opset = 13 : i64} : (tensor<2x4x3xf32>, tensor<2x3xi64>, tensor<4xf32>) -> tensor<f32>
  // CHECK-NOT: hps.onnx_node
  return %0, %1, %2 : tensor<f32>, tensor<2x3xf32>, tensor<f32>
}

// -----

// SoftmaxCrossEntropyLoss (12-17): log_softmax along the class axis, then
// the negative log-likelihood; the second output is the log_softmax.
// CHECK-LABEL: func @sce
func.func @sce(%x: tensor<3x5xf32>, %t: tensor<3xi32>) -> (tensor<f32>, tensor<3x5xf32>) {
  // CHECK: %[[LP:.*]] = hps.log_softmax %arg0 {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  // CHECK: hps.gather
  // CHECK: %[[LOSS:.*]] = hps.reduce  sum
  // CHECK: return %[[LOSS]], %[[LP]]
  %0:2 = hps.onnx_node "SoftmaxCrossEntropyLoss"(%x, %t) {attrs = {reduction = "sum"}, domain = "", opset = 13 : i64} : (tensor<3x5xf32>, tensor<3xi32>) -> (tensor<f32>, tensor<3x5xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<3x5xf32>
}

// -----

// Stay generic, with nothing left behind: an unknown reduction, a target
// of the wrong shape, a weight of the wrong length, a dynamic input.
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %t2: tensor<4xi64>, %w: tensor<4xf32>, %d: tensor<?x5xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK-NOT: hps.log_softmax
  // CHECK-NOT: hps.gather
  // CHECK: hps.onnx_node "NegativeLogLikelihoodLoss"{{.*}}reduction = "avg"
  %0 = hps.onnx_node "NegativeLogLikelihoodLoss"(%x, %t) {attrs = {reduction = "avg"}, domain = "", opset = 13 : i64} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
  // CHECK: hps.onnx_node "SoftmaxCrossEntropyLoss"(%arg0, %arg2)
  %1 = hps.onnx_node "SoftmaxCrossEntropyLoss"(%x, %t2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x5xf32>, tensor<4xi64>) -> tensor<f32>
  // CHECK: hps.onnx_node "SoftmaxCrossEntropyLoss"(%arg0, %arg1, %arg3)
  %2 = hps.onnx_node "SoftmaxCrossEntropyLoss"(%x, %t, %w) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x5xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<f32>
  // CHECK: hps.onnx_node "NegativeLogLikelihoodLoss"(%arg4, %arg1)
  %3 = hps.onnx_node "NegativeLogLikelihoodLoss"(%d, %t) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x5xf32>, tensor<3xi64>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
