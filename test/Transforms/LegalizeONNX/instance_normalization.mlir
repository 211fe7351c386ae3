// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// InstanceNormalization (opsets 6-17): a layer_norm (unit scale) over the
// flattened spatial axis of a [N, C, L] view, back to X's shape, times
// scale [C, 1, ...] plus B [C, 1, ...].
// CHECK-LABEL: func @instance_norm
func.func @instance_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  // CHECK-DAG: %[[ONES:.*]] = hps.constant dense<1.000000e+00> : tensor<20xf32>
  // CHECK-DAG: %[[ROWS:.*]] = hps.reshape %arg0 {shape = array<i64: 2, 3, 20>}
  // CHECK: %[[N:.*]] = hps.layer_norm %[[ROWS]], %[[ONES]] {axis = 2 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x3x20xf32>, tensor<20xf32>) -> tensor<2x3x20xf32>
  // CHECK-DAG: %[[BACK:.*]] = hps.reshape %[[N]] {shape = array<i64: 2, 3, 4, 5>}
  // CHECK-DAG: %[[S:.*]] = hps.reshape %arg1 {shape = array<i64: 3, 1, 1>}
  // CHECK: %[[M:.*]] = hps.mul %[[BACK]], %[[S]]
  // CHECK: %[[B:.*]] = hps.reshape %arg2 {shape = array<i64: 3, 1, 1>}
  // CHECK: %[[Y:.*]] = hps.add %[[M]], %[[B]]
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "InstanceNormalization"(%x, %s, %b) {attrs = {epsilon = 1.0e-3 : f32}, domain = "", opset = 6 : i64} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Stays generic: a dynamic spatial extent; a scale that is not [C].
// CHECK-LABEL: func @instance_norm_generic
func.func @instance_norm_generic(%x: tensor<2x3x?xf32>, %y: tensor<2x3x4xf32>, %s: tensor<3xf32>, %s4: tensor<4xf32>) -> (tensor<2x3x?xf32>, tensor<2x3x4xf32>) {
  // CHECK: hps.onnx_node "InstanceNormalization"(%arg0
  %0 = hps.onnx_node "InstanceNormalization"(%x, %s, %s) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3x?xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x?xf32>
  // CHECK: hps.onnx_node "InstanceNormalization"(%arg1
  %1 = hps.onnx_node "InstanceNormalization"(%y, %s4, %s4) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x?xf32>, tensor<2x3x4xf32>
}
