// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// ReverseSequence: a GatherElements along the time axis at
// where(t < len, len - 1 - t, t) on the [batch, time] grid, expanded over
// the other axes (then GatherElements' flattened positions and range guard).
// CHECK-LABEL: func @reverse_batch_major
func.func @reverse_batch_major(%x: tensor<3x4x2xf32>, %l: tensor<3xi64>) -> tensor<3x4x2xf32> {
  // CHECK-DAG: %[[ONE:.*]] = hps.constant dense<1> : tensor<i64>
  // CHECK-DAG: %[[T:.*]] = hps.constant dense<{{\[}}[0, 1, 2, 3]]> : tensor<1x4xi64>
  // CHECK: %[[L:.*]] = hps.reshape %arg1 {shape = array<i64: 3, 1>}
  // CHECK: %[[LAST:.*]] = hps.sub %[[L]], %[[ONE]]
  // CHECK: %[[REV:.*]] = hps.sub %[[LAST]], %[[T]] : tensor<3x1xi64>, tensor<1x4xi64> -> tensor<3x4xi64>
  // CHECK: %[[IN:.*]] = hps.less %[[T]], %[[L]]
  // CHECK: %[[GRID:.*]] = hps.where %[[IN]], %[[REV]], %[[T]]
  // CHECK: %[[G3:.*]] = hps.reshape %[[GRID]] {shape = array<i64: 3, 4, 1>}
  // CHECK: hps.expand %[[G3]] {shape = array<i64: 3, 4, 2>}
  // CHECK: hps.gather {{.*}} : (tensor<24xf32>, tensor<3x4x2xi64>) -> tensor<3x4x2xf32>
  %0 = hps.onnx_node "ReverseSequence"(%x, %l) {attrs = {batch_axis = 0 : i64, time_axis = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<3x4x2xf32>, tensor<3xi64>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

// The defaults: time_axis 0, batch_axis 1; rank 2 needs no expand.
// CHECK-LABEL: func @reverse_time_major
func.func @reverse_time_major(%x: tensor<4x3xf32>, %l: tensor<3xi64>) -> tensor<4x3xf32> {
  // CHECK-DAG: %[[T:.*]] = hps.constant dense<{{\[}}[0], [1], [2], [3]]> : tensor<4x1xi64>
  // CHECK-DAG: hps.reshape %arg1 {shape = array<i64: 1, 3>}
  // CHECK-NOT: hps.expand
  // CHECK: hps.gather {{.*}} : (tensor<12xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  %0 = hps.onnx_node "ReverseSequence"(%x, %l) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Stay generic: equal axes, lengths of another count than the batch.
// CHECK-LABEL: func @reverse_generic
func.func @reverse_generic(%x: tensor<4x3xf32>, %l: tensor<3xi64>, %l4: tensor<4xi64>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  // CHECK-COUNT-2: hps.onnx_node "ReverseSequence"
  %0 = hps.onnx_node "ReverseSequence"(%x, %l) {attrs = {batch_axis = 1 : i64, time_axis = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  %1 = hps.onnx_node "ReverseSequence"(%x, %l4) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}
