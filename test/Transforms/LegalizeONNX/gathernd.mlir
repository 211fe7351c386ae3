// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// GatherND (11-17): negative index components wrapped by their own axis's
// extent, each component scaled by its stride and summed (plus a constant
// offset for the batch_dims coordinates), then one gather along axis 0 of
// the data viewed as [product of the indexed axes, rest...]. Run-time
// indices whose components are not all within [0, extent) once wrapped go
// to position 12, past the end, where the kernel stops the run.
// CHECK-LABEL: func @gathernd
func.func @gathernd(%d: tensor<3x4xi32>, %i: tensor<2x2xi64>) -> tensor<2xi32> {
  // CHECK-DAG: %[[PAST:.*]] = hps.constant dense<12> : tensor<i64>
  // CHECK-DAG: %[[STRIDE:.*]] = hps.constant dense<4> : tensor<i64>
  // CHECK-DAG: %[[ROWS:.*]] = hps.constant dense<3> : tensor<i64>
  // CHECK-DAG: %[[EXTENTS:.*]] = hps.constant dense<[3, 4]> : tensor<2xi64>
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0> : tensor<i64>
  // CHECK: %[[NEG:.*]] = hps.less %arg1
  // CHECK: %[[UP:.*]] = hps.add %arg1, %[[EXTENTS]]
  // CHECK: %[[W:.*]] = hps.where %[[NEG]], %[[UP]], %arg1
  // CHECK: %[[C0:.*]] = hps.slice %[[W]] {axes = array<i64: 1>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK: %[[R0:.*]] = hps.reshape %[[C0]] {shape = array<i64: 2>}
  // CHECK-DAG: %[[LT0:.*]] = hps.less %[[R0]], %[[ROWS]]
  // CHECK-DAG: %[[GE0:.*]] = hps.greater_equal %[[R0]], %[[ZERO]]
  // CHECK: %[[OK0:.*]] = hps.and
  // CHECK: %[[M0:.*]] = hps.mul %[[R0]], %[[STRIDE]]
  // CHECK: %[[C1:.*]] = hps.slice %[[W]] {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 1>
  // CHECK: %[[R1:.*]] = hps.reshape %[[C1]] {shape = array<i64: 2>}
  // CHECK-DAG: %[[LT1:.*]] = hps.less %[[R1]], %[[STRIDE]]
  // CHECK-DAG: %[[GE1:.*]] = hps.greater_equal %[[R1]], %[[ZERO]]
  // CHECK: %[[OK1:.*]] = hps.and
  // CHECK: %[[OK:.*]] = hps.and %[[OK0]], %[[OK1]]
  // CHECK: %[[SUM:.*]] = hps.add %[[M0]], %[[R1]]
  // CHECK: %[[POS:.*]] = hps.where %[[OK]], %[[SUM]], %[[PAST]]
  // CHECK: %[[FLAT:.*]] = hps.reshape %arg0 {shape = array<i64: 12>}
  // CHECK: %[[G:.*]] = hps.gather %[[FLAT]], %[[POS]] : (tensor<12xi32>, tensor<2xi64>) -> tensor<2xi32>
  // CHECK: return %[[G]]
  %0 = hps.onnx_node "GatherND"(%d, %i) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<3x4xi32>, tensor<2x2xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// batch_dims = 1: the batch coordinate's offset is a constant.
// CHECK-LABEL: func @gathernd_batch
func.func @gathernd_batch(%d: tensor<2x3x4xf32>, %i: tensor<2x5x1xi64>) -> tensor<2x5x4xf32> {
  // CHECK-DAG: %[[BASE:.*]] = hps.constant dense<{{\[}}[0, 0, 0, 0, 0], [3, 3, 3, 3, 3]]> : tensor<2x5xi64>
  // CHECK: %[[SUM:.*]] = hps.add %{{.*}}, %[[BASE]] : tensor<2x5xi64>
  // CHECK: %[[POS:.*]] = hps.where %{{.*}}, %[[SUM]], %{{.*}} : (tensor<2x5xi1>, tensor<2x5xi64>, tensor<i64>) -> tensor<2x5xi64>
  // CHECK: %[[VIEW:.*]] = hps.reshape %arg0 {shape = array<i64: 6, 4>}
  // CHECK: hps.gather %[[VIEW]], %[[POS]] : (tensor<6x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  %0 = hps.onnx_node "GatherND"(%d, %i) {attrs = {batch_dims = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

// Stays generic: a dynamic data shape.
// CHECK-LABEL: func @gathernd_generic
func.func @gathernd_generic(%d: tensor<?x4xf32>, %i: tensor<2x1xi64>) -> tensor<2x4xf32> {
  // CHECK: hps.onnx_node "GatherND"
  %0 = hps.onnx_node "GatherND"(%d, %i) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
