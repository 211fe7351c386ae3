// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// NonZero: [rank, numel] coordinates and a count; the declared extent (a
// test model's) gives way to the capacity.
// CHECK-LABEL: func @non_zero
// CHECK-SAME: -> tensor<2x12xi64>
func.func @non_zero(%x: tensor<3x4xf32>) -> tensor<2x5xi64> {
  // CHECK: %[[I:.*]], %{{.*}} = hps.non_zero %arg0 : (tensor<3x4xf32>) -> (tensor<2x12xi64>, tensor<i64>)
  %0 = hps.onnx_node "NonZero"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3x4xf32>) -> tensor<2x5xi64>
  // CHECK: return %[[I]]
  return %0 : tensor<2x5xi64>
}

// -----

// Unique without an axis runs on the flattened input.
// CHECK-LABEL: func @unique_flat
func.func @unique_flat(%x: tensor<2x3xi64>) -> (tensor<?xi64>, tensor<6xi64>) {
  // CHECK: %[[F:.*]] = hps.reshape %arg0 {{.*}} -> tensor<6xi64>
  // CHECK: hps.unique %[[F]] {axis = 0 : i64, sorted} : (tensor<6xi64>) -> (tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<6xi64>, tensor<i64>)
  %0:4 = hps.onnx_node "Unique"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  return %0#0, %0#2 : tensor<?xi64>, tensor<6xi64>
}

// -----

// CHECK-LABEL: func @unique_axis
func.func @unique_axis(%x: tensor<2x5x3xf32>) -> tensor<2x?x3xf32> {
  // CHECK: hps.unique %arg0 {axis = 1 : i64} : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<i64>)
  %0:4 = hps.onnx_node "Unique"(%x) {attrs = {axis = -2 : i64, sorted = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<2x5x3xf32>) -> (tensor<2x?x3xf32>, tensor<?xi64>, tensor<5xi64>, tensor<?xi64>)
  return %0#0 : tensor<2x?x3xf32>
}

// -----

// A constant max_output_boxes_per_class bounds the selections: capacity
// batches x classes x min(limit, boxes); a run-time one does not.
// CHECK-LABEL: func @nms
func.func @nms(%boxes: tensor<2x10x4xf32>, %scores: tensor<2x3x10xf32>, %iou: tensor<1xf32>, %limit: tensor<1xi64>) -> (tensor<?x3xi64>, tensor<?x3xi64>) {
  %max = hps.constant dense<4> : tensor<1xi64>
  // CHECK: hps.non_max_suppression %arg0, %arg1 max_per_class %{{.*}} iou_threshold %arg2 {center_point_box} : {{.*}} -> (tensor<24x3xi64>, tensor<i64>)
  %0 = hps.onnx_node "NonMaxSuppression"(%boxes, %scores, %max, %iou) {attrs = {center_point_box = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<2x10x4xf32>, tensor<2x3x10xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  // CHECK: hps.non_max_suppression %arg0, %arg1 max_per_class %arg3 : {{.*}} -> (tensor<60x3xi64>, tensor<i64>)
  %1 = hps.onnx_node "NonMaxSuppression"(%boxes, %scores, %limit) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x10x4xf32>, tensor<2x3x10xf32>, tensor<1xi64>) -> tensor<?x3xi64>
  return %0, %1 : tensor<?x3xi64>, tensor<?x3xi64>
}

// -----

// Compress by a constant condition is a gather by constant positions; by a
// run-time one, a gather by NonZero's.
// CHECK-LABEL: func @compress
func.func @compress(%x: tensor<4x3xf32>, %keep: tensor<3xi1>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %c = hps.constant dense<[true, false, true, true]> : tensor<4xi1>
  // CHECK-DAG: %[[P:.*]] = hps.constant dense<[0, 2, 3]> : tensor<3xi64>
  // CHECK-DAG: hps.gather %arg0, %[[P]] : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<3x3xf32>
  %0 = hps.onnx_node "Compress"(%x, %c) {attrs = {axis = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<4x3xf32>, tensor<4xi1>) -> tensor<?x3xf32>
  // CHECK: %[[I:.*]], %{{.*}} = hps.non_zero %arg1 : (tensor<3xi1>) -> (tensor<1x3xi64>, tensor<i64>)
  // CHECK: %[[R:.*]] = hps.reshape %[[I]]
  // CHECK: hps.gather %arg0, %[[R]] : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<3x3xf32>
  %1 = hps.onnx_node "Compress"(%x, %keep) {attrs = {axis = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<4x3xf32>, tensor<3xi1>) -> tensor<?x3xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<?x3xf32>
}
