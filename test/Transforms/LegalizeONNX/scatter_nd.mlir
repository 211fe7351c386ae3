// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// ScatterND of constants folds (Swin builds its shifted-window mask so):
// whole rows with k = 1, single elements with k = 2, a negative index
// counting from the end, and the add and mul reductions of opset 16.
// CHECK-LABEL: func @scatter_nd
func.func @scatter_nd() -> (tensor<3x2xf32>, tensor<2x2xi64>, tensor<3xf32>, tensor<3xf32>) {
  %data = hps.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %rows = hps.constant dense<[[2], [0]]> : tensor<2x1xi64>
  %rowUpdates = hps.constant dense<[[10.0, 20.0], [30.0, 40.0]]> : tensor<2x2xf32>
  // CHECK-DAG: hps.constant dense<{{\[}}[3.000000e+01, 4.000000e+01], [3.000000e+00, 4.000000e+00], [1.000000e+01, 2.000000e+01]]> : tensor<3x2xf32>
  %0 = hps.onnx_node "ScatterND"(%data, %rows, %rowUpdates) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x2xf32>, tensor<2x1xi64>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %ints = hps.constant dense<0> : tensor<2x2xi64>
  %points = hps.constant dense<[[0, 1], [-1, 0]]> : tensor<2x2xi64>
  %values = hps.constant dense<[7, 9]> : tensor<2xi64>
  // CHECK-DAG: hps.constant dense<{{\[}}[0, 7], [9, 0]]> : tensor<2x2xi64>
  %1 = hps.onnx_node "ScatterND"(%ints, %points, %values) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x2xi64>, tensor<2x2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %vec = hps.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %twice = hps.constant dense<[[1], [1]]> : tensor<2x1xi64>
  %deltas = hps.constant dense<[5.0, 0.5]> : tensor<2xf32>
  // CHECK-DAG: hps.constant dense<[1.000000e+00, 7.500000e+00, 3.000000e+00]> : tensor<3xf32>
  %2 = hps.onnx_node "ScatterND"(%vec, %twice, %deltas) {attrs = {reduction = "add"}, domain = "", opset = 16 : i64} : (tensor<3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<3xf32>
  // CHECK-DAG: hps.constant dense<[1.000000e+00, 5.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %3 = hps.onnx_node "ScatterND"(%vec, %twice, %deltas) {attrs = {reduction = "mul"}, domain = "", opset = 16 : i64} : (tensor<3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<3x2xf32>, tensor<2x2xi64>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A run-time operand: one hps.scatter along axis 0 of the data's [rows,
// rest...] view at sum_k wrap(indices[..., k]) * stride_k, reshaped back;
// a position with a component out of its axis's range goes to row 12, past
// the end, where the kernel stops the run.
// CHECK-LABEL: func @scatter_nd_run_time
func.func @scatter_nd_run_time(%x: tensor<3x4x2xf32>, %i: tensor<5x2xi64>, %u: tensor<5x2xf32>) -> tensor<3x4x2xf32> {
  // CHECK-DAG: %[[EXTENTS:.*]] = hps.constant dense<[3, 4]> : tensor<2xi64>
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0> : tensor<i64>
  // CHECK-DAG: %[[FOUR:.*]] = hps.constant dense<4> : tensor<i64>
  // CHECK-DAG: %[[PAST:.*]] = hps.constant dense<12> : tensor<i64>
  // CHECK: %[[NEG:.*]] = hps.less %arg1, %[[ZERO]]
  // CHECK: %[[UP:.*]] = hps.add %arg1, %[[EXTENTS]]
  // CHECK: %[[WRAPPED:.*]] = hps.where %[[NEG]], %[[UP]], %arg1
  // CHECK: %[[I0:.*]] = hps.slice %[[WRAPPED]] {axes = array<i64: 1>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK: %[[R0:.*]] = hps.reshape %[[I0]] {shape = array<i64: 5>}
  // CHECK: %[[M0:.*]] = hps.mul %[[R0]], %[[FOUR]]
  // CHECK: %[[I1:.*]] = hps.slice %[[WRAPPED]] {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 1>
  // CHECK: %[[R1:.*]] = hps.reshape %[[I1]] {shape = array<i64: 5>}
  // CHECK: %[[SUM:.*]] = hps.add %[[M0]], %[[R1]]
  // CHECK: %[[POS:.*]] = hps.where %{{.*}}, %[[SUM]], %[[PAST]]
  // CHECK: %[[VIEW:.*]] = hps.reshape %arg0 {shape = array<i64: 12, 2>}
  // CHECK: %[[S:.*]] = hps.scatter %[[VIEW]], %[[POS]], %arg2 : (tensor<12x2xf32>, tensor<5xi64>, tensor<5x2xf32>) -> tensor<12x2xf32>
  // CHECK: %[[BACK:.*]] = hps.reshape %[[S]] {shape = array<i64: 3, 4, 2>}
  // CHECK: return %[[BACK]]
  %0 = hps.onnx_node "ScatterND"(%x, %i, %u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x4x2xf32>, tensor<5x2xi64>, tensor<5x2xf32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

// Reductions of opset 16 and 18 on run-time data; constants that a fold
// does not cover (max) become a scatter too.
// CHECK-LABEL: func @scatter_nd_reductions
func.func @scatter_nd_reductions(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %i = hps.constant dense<[[1]]> : tensor<1x1xi64>
  %u = hps.constant dense<[2.0]> : tensor<1xf32>
  %c = hps.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // CHECK: hps.scatter {{.*}}reduction = #hps<scatter_reduction mul>
  %0 = hps.onnx_node "ScatterND"(%x, %i, %u) {attrs = {reduction = "mul"}, domain = "", opset = 16 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  // CHECK: hps.scatter {{.*}}reduction = #hps<scatter_reduction max>
  %1 = hps.onnx_node "ScatterND"(%c, %i, %u) {attrs = {reduction = "max"}, domain = "", opset = 17 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Stays generic: a constant index out of range, an unknown reduction,
// updates that do not match the indexed slices, a dynamic shape.
// CHECK-LABEL: func @scatter_nd_generic
func.func @scatter_nd_generic(%x: tensor<3xf32>, %d: tensor<?xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<?xf32>) {
  %i = hps.constant dense<[[1]]> : tensor<1x1xi64>
  %far = hps.constant dense<[[3]]> : tensor<1x1xi64>
  %u = hps.constant dense<[2.0]> : tensor<1xf32>
  %u2 = hps.constant dense<[2.0, 3.0]> : tensor<2xf32>
  // CHECK: hps.onnx_node "ScatterND"
  %0 = hps.onnx_node "ScatterND"(%x, %far, %u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "ScatterND"{{.*}}reduction = "sub"
  %1 = hps.onnx_node "ScatterND"(%x, %i, %u) {attrs = {reduction = "sub"}, domain = "", opset = 17 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "ScatterND"
  %2 = hps.onnx_node "ScatterND"(%x, %i, %u2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>, tensor<1x1xi64>, tensor<2xf32>) -> tensor<3xf32>
  // CHECK: hps.onnx_node "ScatterND"
  %3 = hps.onnx_node "ScatterND"(%d, %i, %u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<?xf32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<?xf32>
}
