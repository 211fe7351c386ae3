// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-8: C is required and broadcast unidirectionally to (M, N);
// alpha, beta, transA and transB default to 1, 1, 0, 0 (elided).
// CHECK-LABEL: func @gemm_7
func.func @gemm_7(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: hps.gemm %arg0, %arg1, %arg2 : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %0 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Opsets 9-10: every attribute set.
// CHECK-LABEL: func @gemm_9_attrs
func.func @gemm_9_attrs(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>, %c: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // CHECK: hps.gemm %arg0, %arg1, %arg2 {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a, trans_b} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %0 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {alpha = 0.5 : f32, beta = 2.0 : f32, transA = 1 : i64, transB = 1 : i64}, domain = "", opset = 9 : i64} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Before opset 11 a Gemm without C is malformed: it stays generic.
// CHECK-LABEL: func @gemm_10_no_c
func.func @gemm_10_no_c(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK: hps.onnx_node "Gemm"
  %0 = hps.onnx_node "Gemm"(%a, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Opset 11+: C is optional, left out or omitted with an empty name.
// CHECK-LABEL: func @gemm_11_optional_c
func.func @gemm_11_optional_c(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %c: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %none = hps.none
  // CHECK: hps.gemm %arg0, %arg1 {trans_b} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %0 = hps.onnx_node "Gemm"(%a, %b) {attrs = {transB = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  // CHECK: hps.gemm %arg0, %arg1 {beta = 0.000000e+00 : f32, trans_b} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = hps.onnx_node "Gemm"(%a, %b, %none) {attrs = {beta = 0.0 : f32, transB = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, none) -> tensor<2x4xf32>
  // CHECK: hps.gemm %arg0, %arg1, %arg2 {alpha = 2.000000e+00 : f32, trans_b} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {alpha = 2.0 : f32, transB = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Stays generic: a flag other than 0/1, an attribute of no opset 7-17
// schema (opset 6's `broadcast`), a C that does not broadcast, 3-D A.
// CHECK-LABEL: func @gemm_generic
func.func @gemm_generic(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3x4xf32>, %a3: tensor<1x2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: hps.onnx_node "Gemm"(%arg0, %arg1) {attrs = {transA = 2 : i64}
  %0 = hps.onnx_node "Gemm"(%a, %b) {attrs = {transA = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK: hps.onnx_node "Gemm"(%arg0, %arg1, %arg2) {attrs = {broadcast = 1 : i64}
  %1 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {broadcast = 1 : i64}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK: hps.onnx_node "Gemm"(%arg0, %arg1, %arg2) {attrs = {}
  %2 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK: hps.onnx_node "Gemm"(%arg3, %arg1)
  %3 = hps.onnx_node "Gemm"(%a3, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Gemm-6: C broadcast only with broadcast=1 (else C is (M, N)); both are
// cases of the unidirectional broadcast of Gemm-7.
// CHECK-LABEL: func @gemm_6
func.func @gemm_6(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>, %full: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: hps.gemm %arg0, %arg1, %arg2 {alpha = 5.000000e-01 : f32}
  %0 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {alpha = 0.5 : f32, broadcast = 1 : i64}, domain = "", opset = 6 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: hps.gemm %arg0, %arg1, %arg3
  %1 = hps.onnx_node "Gemm"(%a, %b, %full) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// f64 (and integers): hps.gemm's kernels take f32 only, so the product is
// an hps.matmul (exact loops), with the transposes, alpha and beta apart.
// CHECK-LABEL: func @gemm_f64
func.func @gemm_f64(%a: tensor<3x2xf64>, %b: tensor<4x3xf64>, %c: tensor<4xf64>) -> tensor<2x4xf64> {
  // CHECK: %[[A:.*]] = hps.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<3x2xf64>) -> tensor<2x3xf64>
  // CHECK: %[[B:.*]] = hps.transpose %arg1 {perm = array<i64: 1, 0>} : (tensor<4x3xf64>) -> tensor<3x4xf64>
  // CHECK: %[[P:.*]] = hps.matmul %[[A]], %[[B]] : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  // CHECK: %[[S:.*]] = hps.mul %[[P]], %{{.*}} : tensor<2x4xf64>, tensor<f64> -> tensor<2x4xf64>
  // CHECK: %[[C:.*]] = hps.mul %arg2, %{{.*}} : tensor<4xf64>, tensor<f64> -> tensor<4xf64>
  // CHECK: hps.add %[[S]], %[[C]] : tensor<2x4xf64>, tensor<4xf64> -> tensor<2x4xf64>
  // CHECK-NOT: hps.gemm
  %0 = hps.onnx_node "Gemm"(%a, %b, %c) {attrs = {alpha = 2.0 : f32, beta = 0.5 : f32, transA = 1 : i64, transB = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<3x2xf64>, tensor<4x3xf64>, tensor<4xf64>) -> tensor<2x4xf64>
  return %0 : tensor<2x4xf64>
}
