// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Adagrad over two tensors: one learning rate r / (1 + t decay) for both,
// then per tensor the regularised gradient, the accumulated square and the
// step; the new tensors come first, then the new accumulators.
// CHECK-LABEL: func @adagrad
func.func @adagrad(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<3xf32>, %x2: tensor<2x2xf32>, %g1: tensor<3xf32>, %g2: tensor<2x2xf32>, %h1: tensor<3xf32>, %h2: tensor<2x2xf32>) -> (tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>) {
  // CHECK: %[[T:.*]] = hps.cast %arg1 : (tensor<i64>) -> tensor<f32>
  // CHECK: hps.mul %[[T]]
  // CHECK: %[[RATE:.*]] = hps.div %arg0, %{{.*}} : tensor<f32>
  // CHECK: %[[H1:.*]] = hps.add %arg6, %{{.*}} : tensor<3xf32>
  // CHECK: hps.sqrt %[[H1]]
  // CHECK: hps.mul %[[RATE]]
  // CHECK: %[[X1:.*]] = hps.sub %arg2
  // CHECK: %[[X2:.*]] = hps.sub %arg3
  // CHECK: return %[[X1]], %[[X2]], %[[H1]], %{{.*}} : tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>
  %0:4 = hps.onnx_node "Adagrad"(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {attrs = {decay_factor = 1.000000e-01 : f32, epsilon = 1.000000e-05 : f32}, domain = "ai.onnx.preview.training", opset = 1 : i64} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>) -> (tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>
}

// -----

// Adam corrects the rate from the first step on; the step count picks.
// CHECK-LABEL: func @adam
func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>, %h: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  // CHECK: hps.pow
  // CHECK: hps.pow
  // CHECK: %[[STARTED:.*]] = hps.greater %arg1, %{{.*}} : tensor<i64>, tensor<i64> -> tensor<i1>
  // CHECK: hps.where %[[STARTED]]
  %0:3 = hps.onnx_node "Adam"(%r, %t, %x, %g, %v, %h) {attrs = {alpha = 9.500000e-01 : f32}, domain = "ai.onnx.preview.training", opset = 1 : i64} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Momentum needs its mode: without it the node stays generic.
// CHECK-LABEL: func @momentum_without_mode
func.func @momentum_without_mode(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: hps.onnx_node "Momentum"
  %0:2 = hps.onnx_node "Momentum"(%r, %t, %x, %g, %v) {attrs = {alpha = 9.500000e-01 : f32, beta = 1.000000e-01 : f32, norm_coefficient = 0.0 : f32}, domain = "ai.onnx.preview.training", opset = 1 : i64} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2xf32>
}
