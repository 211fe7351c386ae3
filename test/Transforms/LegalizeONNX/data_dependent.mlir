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

// -----

// On constant operands each folds to its exact result, computed by the
// runtime's own algorithms, so what reads its extent folds too.
// CHECK-LABEL: func @fold_non_zero
func.func @fold_non_zero(%x: tensor<2x3xf32>) -> (tensor<?x?xi64>, tensor<2xi64>) {
  %c = hps.constant dense<[[0.0, 1.5, 0.0], [-0.0, 2.0, 3.0]]> : tensor<2x3xf32>
  // CHECK-DAG: hps.constant dense<{{\[}}[0, 1, 1], [1, 1, 2]]> : tensor<2x3xi64>
  // CHECK-DAG: hps.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK-NOT: hps.non_zero
  %0 = hps.onnx_node "NonZero"(%c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<?x?xi64>
  %1 = hps.onnx_node "Shape"(%0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x?xi64>) -> tensor<2xi64>
  return %0, %1 : tensor<?x?xi64>, tensor<2xi64>
}

// -----

// The operand becomes constant only once the bound input shape folds: a
// transformer's mask, NonZero(ConstantOfShape(Shape(x))).
// CHECK-LABEL: func @fold_mask_from_shape
func.func @fold_mask_from_shape(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // CHECK: %[[S:.*]] = hps.constant dense<[2, 6]> : tensor<2xi64>
  // CHECK-NEXT: return %[[S]]
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  %ones = hps.onnx_node "ConstantOfShape"(%s) {attrs = {value = dense<1> : tensor<1xi64>}, domain = "", opset = 13 : i64} : (tensor<2xi64>) -> tensor<?x?xi64>
  %nz = hps.onnx_node "NonZero"(%ones) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x?xi64>) -> tensor<2x?xi64>
  %n = hps.onnx_node "Shape"(%nz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x?xi64>) -> tensor<2xi64>
  return %n : tensor<2xi64>
}

// -----

// Unique of a constant: values, first indices, inverse and counts (not
// sorted: in order of first occurrence); NaN is never equal to itself.
// CHECK-LABEL: func @fold_unique
func.func @fold_unique() -> (tensor<?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
  %c = hps.constant dense<[2.0, 1.0, 2.0, 0x7FC00000, 1.0, 0x7FC00000]> : tensor<6xf32>
  // CHECK-DAG: hps.constant dense<[2.000000e+00, 1.000000e+00, 0x7FC00000, 0x7FC00000]> : tensor<4xf32>
  // CHECK-DAG: hps.constant dense<[0, 1, 3, 5]> : tensor<4xi64>
  // CHECK-DAG: hps.constant dense<[0, 1, 0, 2, 1, 3]> : tensor<6xi64>
  // CHECK-DAG: hps.constant dense<[2, 2, 1, 1]> : tensor<4xi64>
  // CHECK-NOT: hps.unique
  %0:4 = hps.onnx_node "Unique"(%c) {attrs = {sorted = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
}

// -----

// Unique along an axis of a constant, sorted.
// CHECK-LABEL: func @fold_unique_rows
func.func @fold_unique_rows() -> tensor<?x2xi32> {
  %c = hps.constant dense<[[3, 1], [0, 5], [3, 1]]> : tensor<3x2xi32>
  // CHECK: hps.constant dense<{{\[}}[0, 5], [3, 1]]> : tensor<2x2xi32>
  %0:4 = hps.onnx_node "Unique"(%c) {attrs = {axis = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<3x2xi32>) -> (tensor<?x2xi32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
  return %0#0 : tensor<?x2xi32>
}

// -----

// NonMaxSuppression of constant boxes and scores: the second box overlaps
// the first (IoU 0.81) and is suppressed.
// CHECK-LABEL: func @fold_nms
func.func @fold_nms() -> tensor<?x3xi64> {
  %boxes = hps.constant dense<[[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.0], [0.0, 2.0, 1.0, 3.0]]]> : tensor<1x3x4xf32>
  %scores = hps.constant dense<[[[0.9, 0.8, 0.7]]]> : tensor<1x1x3xf32>
  %max = hps.constant dense<3> : tensor<1xi64>
  %iou = hps.constant dense<0.5> : tensor<1xf32>
  // CHECK: hps.constant dense<{{\[}}[0, 0, 0], [0, 0, 2]]> : tensor<2x3xi64>
  // CHECK-NOT: hps.non_max_suppression
  %0 = hps.onnx_node "NonMaxSuppression"(%boxes, %scores, %max, %iou) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<1x3x4xf32>, tensor<1x1x3xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// Compress by a condition that becomes constant only after folding.
// CHECK-LABEL: func @compress_by_folded_condition
func.func @compress_by_folded_condition(%x: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %a = hps.constant dense<[1, 0, 2, 0]> : tensor<4xi64>
  %zero = hps.constant dense<0> : tensor<i64>
  // CHECK: %[[P:.*]] = hps.constant dense<[0, 2]> : tensor<2xi64>
  // CHECK: hps.gather %arg0, %[[P]] : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %keep = hps.onnx_node "Greater"(%a, %zero) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<?xi1>
  %0 = hps.onnx_node "Compress"(%x, %keep) {attrs = {axis = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<4x3xf32>, tensor<?xi1>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
