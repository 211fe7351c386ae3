// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// ScatterElements (11-18): GatherElements' positions (indices wrapped by
// the axis extent, times the axis stride, plus the constant offset of the
// other coordinates) into the flattened data, one hps.scatter, reshaped.
// CHECK-LABEL: func @scatter_elements
func.func @scatter_elements(%d: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
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
  // CHECK: %[[S:.*]] = hps.scatter %[[FLAT]], %[[SAFE]], %arg2 : (tensor<12xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<12xf32>
  // CHECK: %[[BACK:.*]] = hps.reshape %[[S]] {shape = array<i64: 3, 4>}
  // CHECK: return %[[BACK]]
  %0 = hps.onnx_node "ScatterElements"(%d, %i, %u) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// The last axis (no multiply), i32 indices, the reductions of opsets 16 and
// 18, and Scatter, the op's name at opsets 9 and 10.
// CHECK-LABEL: func @scatter_elements_reductions
func.func @scatter_elements_reductions(%d: tensor<2x3xi64>, %i: tensor<2x2xi32>, %u: tensor<2x2xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>) {
  // CHECK-DAG: hps.constant dense<{{\[}}[0, 0], [3, 3]]> : tensor<2x2xi32>
  // CHECK-NOT: hps.mul
  // CHECK: hps.scatter {{.*}}reduction = #hps<scatter_reduction add>} : (tensor<6xi64>, tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<6xi64>
  %0 = hps.onnx_node "ScatterElements"(%d, %i, %u) {attrs = {axis = -1 : i64, reduction = "add"}, domain = "", opset = 16 : i64} : (tensor<2x3xi64>, tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<2x3xi64>
  // CHECK: hps.scatter {{.*}}reduction = #hps<scatter_reduction min>
  %1 = hps.onnx_node "ScatterElements"(%d, %i, %u) {attrs = {axis = 1 : i64, reduction = "min"}, domain = "", opset = 17 : i64} : (tensor<2x3xi64>, tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<2x3xi64>
  // CHECK: hps.scatter %{{[0-9]+}}, %{{[0-9]+}}, %arg2 : (tensor<6xi64>
  %2 = hps.onnx_node "Scatter"(%d, %i, %u) {attrs = {axis = 1 : i64}, domain = "", opset = 9 : i64} : (tensor<2x3xi64>, tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<2x3xi64>
  return %0, %1, %2 : tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// Stays generic: dynamic shapes, updates not shaped as the indices, a
// constant index out of range, an unknown reduction.
// CHECK-LABEL: func @scatter_elements_generic
func.func @scatter_elements_generic(%d: tensor<?x4xf32>, %s: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>, %v: tensor<2x3xf32>) -> (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %far = hps.constant dense<3> : tensor<2x4xi64>
  // CHECK: hps.onnx_node "ScatterElements"
  %0 = hps.onnx_node "ScatterElements"(%d, %i, %u) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<?x4xf32>
  // CHECK: hps.onnx_node "ScatterElements"
  %1 = hps.onnx_node "ScatterElements"(%s, %i, %v) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  // CHECK: hps.onnx_node "ScatterElements"
  %2 = hps.onnx_node "ScatterElements"(%s, %far, %u) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  // CHECK: hps.onnx_node "ScatterElements"{{.*}}reduction = "sub"
  %3 = hps.onnx_node "ScatterElements"(%s, %i, %u) {attrs = {axis = 0 : i64, reduction = "sub"}, domain = "", opset = 16 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2, %3 : tensor<?x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
