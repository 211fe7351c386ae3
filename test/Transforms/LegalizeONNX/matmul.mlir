// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @matmul_2d
func.func @matmul_2d(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: hps.matmul %arg0, %arg1 : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = hps.onnx_node "MatMul"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// 1-D operands are promoted (a leading 1 on A, a trailing 1 on B) and the
// added axis dropped again; two vectors give a scalar.
// CHECK-LABEL: func @matmul_vectors
func.func @matmul_vectors(%a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<3xf32>) -> (tensor<4xf32>, tensor<5x2xf32>, tensor<f32>) {
  // CHECK: hps.matmul %arg2, %arg1 : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %0 = hps.onnx_node "MatMul"(%v, %b) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  // CHECK: hps.matmul %arg0, %arg2 : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  %1 = hps.onnx_node "MatMul"(%a, %v) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  // CHECK: hps.matmul %arg2, %arg2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %2 = hps.onnx_node "MatMul"(%v, %v) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<4xf32>, tensor<5x2xf32>, tensor<f32>
}

// -----

// Batch dims broadcast numpy-style, also against a dynamic batch.
// CHECK-LABEL: func @matmul_batched
func.func @matmul_batched(%a: tensor<5x2x3xf32>, %w: tensor<7x1x3x2xf32>, %d: tensor<?x4x2x3xf32>, %e: tensor<4x3x6xf32>) -> (tensor<7x5x2x2xf32>, tensor<?x4x2x6xf32>) {
  // CHECK: hps.matmul %arg0, %arg1 : (tensor<5x2x3xf32>, tensor<7x1x3x2xf32>) -> tensor<7x5x2x2xf32>
  %0 = hps.onnx_node "MatMul"(%a, %w) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<5x2x3xf32>, tensor<7x1x3x2xf32>) -> tensor<7x5x2x2xf32>
  // CHECK: hps.matmul %arg2, %arg3 : (tensor<?x4x2x3xf32>, tensor<4x3x6xf32>) -> tensor<?x4x2x6xf32>
  %1 = hps.onnx_node "MatMul"(%d, %e) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<?x4x2x3xf32>, tensor<4x3x6xf32>) -> tensor<?x4x2x6xf32>
  return %0, %1 : tensor<7x5x2x2xf32>, tensor<?x4x2x6xf32>
}

// -----

// Inner dimensions that differ (a malformed model) or a result shape that
// disagrees with the operands keep the node generic.
// CHECK-LABEL: func @matmul_generic
func.func @matmul_generic(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x6xf32>) {
  // CHECK: hps.onnx_node "MatMul"(%arg0, %arg1)
  %0 = hps.onnx_node "MatMul"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  // CHECK: hps.onnx_node "MatMul"(%arg0, %arg2)
  %1 = hps.onnx_node "MatMul"(%a, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x6xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x6xf32>
}
