// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// GatherElements (11-13): negative indices wrapped by the axis extent, then
// one gather on the flattened data at index * stride(axis) + the constant
// offset of every other coordinate.
// CHECK-LABEL: func @gather_elements
func.func @gather_elements(%d: tensor<3x4xf32>, %i: tensor<2x4xi64>) -> tensor<2x4xf32> {
  // CHECK-DAG: %[[END:.*]] = hps.constant dense<12> : tensor<i64>
  // CHECK-DAG: %[[BASE:.*]] = hps.constant dense<{{\[}}[0, 1, 2, 3], [0, 1, 2, 3]]> : tensor<2x4xi64>
  // CHECK-DAG: %[[STRIDE:.*]] = hps.constant dense<4> : tensor<i64>
  // CHECK-DAG: %[[EXTENT:.*]] = hps.constant dense<3> : tensor<i64>
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0> : tensor<i64>
  // CHECK: %[[NEG:.*]] = hps.less %arg1, %[[ZERO]]
  // CHECK: %[[UP:.*]] = hps.add %arg1, %[[EXTENT]]
  // CHECK: %[[IDX:.*]] = hps.where %[[NEG]], %[[UP]], %arg1
  // CHECK: %[[MUL:.*]] = hps.mul %[[IDX]], %[[STRIDE]]
  // CHECK: %[[POS:.*]] = hps.add %[[MUL]], %[[BASE]]
  // Run-time indices out of range go past the end (12), where the kernel
  // reports them.
  // CHECK: %[[BELOW:.*]] = hps.less %[[IDX]], %[[EXTENT]]
  // CHECK: %[[ABOVE:.*]] = hps.greater_equal %[[IDX]], %[[ZERO]]
  // CHECK: %[[OK:.*]] = hps.and %[[ABOVE]], %[[BELOW]]
  // CHECK: %[[SAFE:.*]] = hps.where %[[OK]], %[[POS]], %[[END]]
  // CHECK: %[[FLAT:.*]] = hps.reshape %arg0 {shape = array<i64: 12>}
  // CHECK: %[[G:.*]] = hps.gather %[[FLAT]], %[[SAFE]] : (tensor<12xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  // CHECK: return %[[G]]
  %0 = hps.onnx_node "GatherElements"(%d, %i) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// The last axis has stride 1 (no multiply); i32 indices keep their type.
// CHECK-LABEL: func @gather_elements_last_axis
func.func @gather_elements_last_axis(%d: tensor<2x3xf32>, %i: tensor<2x2xi32>) -> tensor<2x2xf32> {
  // CHECK-DAG: hps.constant dense<{{\[}}[0, 0], [3, 3]]> : tensor<2x2xi32>
  // CHECK-NOT: hps.mul
  // CHECK: hps.gather {{.*}} : (tensor<6xf32>, tensor<2x2xi32>) -> tensor<2x2xf32>
  %0 = hps.onnx_node "GatherElements"(%d, %i) {attrs = {axis = -1 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>, tensor<2x2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Stays generic: dynamic shapes.
// CHECK-LABEL: func @gather_elements_generic
func.func @gather_elements_generic(%d: tensor<?x4xf32>, %i: tensor<2x4xi64>) -> tensor<2x4xf32> {
  // CHECK: hps.onnx_node "GatherElements"
  %0 = hps.onnx_node "GatherElements"(%d, %i) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
