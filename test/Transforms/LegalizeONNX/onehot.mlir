// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// OneHot (9-11) with a constant depth: indices cast to i64 (float ones
// truncate), negative ones wrapped by depth, compared with a constant iota
// along the new axis; the [off, on] values are two one-element slices that
// the where broadcasts.
// CHECK-LABEL: func @onehot
func.func @onehot(%i: tensor<3xf32>, %v: tensor<2xf32>) -> tensor<4x3xf32> {
  %d = hps.constant dense<4.0> : tensor<f32>
  // CHECK-DAG: %[[IOTA:.*]] = hps.constant dense<{{\[}}[0], [1], [2], [3]]> : tensor<4x1xi64>
  // CHECK: %[[I:.*]] = hps.cast %arg0 : (tensor<3xf32>) -> tensor<3xi64>
  // CHECK: %[[W:.*]] = hps.where {{.*}} : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK: %[[R:.*]] = hps.reshape %[[W]] {shape = array<i64: 1, 3>}
  // CHECK: %[[HIT:.*]] = hps.equal %[[R]], %[[IOTA]] : tensor<1x3xi64>, tensor<4x1xi64> -> tensor<4x3xi1>
  // CHECK-DAG: %[[OFF:.*]] = hps.slice %arg1 {axes = array<i64: 0>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK-DAG: %[[ON:.*]] = hps.slice %arg1 {axes = array<i64: 0>, ends = array<i64: 2>, starts = array<i64: 1>
  // CHECK: %[[OUT:.*]] = hps.where %[[HIT]], %[[ON]], %[[OFF]] : (tensor<4x3xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x3xf32>
  // CHECK: return %[[OUT]]
  %0 = hps.onnx_node "OneHot"(%i, %d, %v) {attrs = {axis = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<3xf32>, tensor<f32>, tensor<2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Stays generic: depth from a graph input (the output shape depends on it).
// CHECK-LABEL: func @onehot_generic
func.func @onehot_generic(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) -> tensor<3x?xf32> {
  // CHECK: hps.onnx_node "OneHot"
  %0 = hps.onnx_node "OneHot"(%i, %d, %v) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}
