// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-10: C required and unidirectionally broadcast.
// CHECK-LABEL: func @gemm_c_required
func.func @gemm_c_required(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>, %c: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // CHECK: hps.gemm %arg0, %arg1, %arg2 {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a, trans_b} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %0 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {alpha = 0.5 : f32, beta = 2.0 : f32, transA = 1 : i64, transB = 1 : i64}, domain = "", opset = 9 : i64} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Opset 11+: C optional.
// CHECK-LABEL: func @gemm_no_c
func.func @gemm_no_c(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: hps.gemm %arg0, %arg1 : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = hps.onnx_node "Gemm"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func @matmul
func.func @matmul(%a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<3xf32>, %w: tensor<7x1x3x2xf32>) -> (tensor<5x2x4xf32>, tensor<4xf32>, tensor<5x2xf32>, tensor<7x5x2x2xf32>) {
  // CHECK: hps.matmul %arg0, %arg1 : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  %0 = hps.onnx_node "MatMul"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  // 1-D operands are promoted and the added axis dropped again.
  // CHECK: hps.matmul %arg2, %arg1 : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %1 = hps.onnx_node "MatMul"(%v, %b) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  // CHECK: hps.matmul %arg0, %arg2 : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  %2 = hps.onnx_node "MatMul"(%a, %v) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  // Batch dims broadcast.
  // CHECK: hps.matmul %arg0, %arg3 : (tensor<5x2x3xf32>, tensor<7x1x3x2xf32>) -> tensor<7x5x2x2xf32>
  %4 = hps.onnx_node "MatMul"(%a, %w) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<5x2x3xf32>, tensor<7x1x3x2xf32>) -> tensor<7x5x2x2xf32>
  return %0, %1, %2, %4 : tensor<5x2x4xf32>, tensor<4xf32>, tensor<5x2xf32>, tensor<7x5x2x2xf32>
}
