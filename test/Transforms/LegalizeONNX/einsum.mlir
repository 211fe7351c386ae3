// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Einsum (12-17): labels only one operand has (and the output lacks) are
// summed first; two operands go to [batch, free, contracted] and [batch,
// contracted, free] (transposes elided when already in order), meet in one
// matmul, and the product is reshaped and transposed to the output order.
// CHECK-LABEL: func @einsum
func.func @einsum(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>, %x: tensor<3x4xf32>, %v: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<5x2x4xf32>, tensor<3xf32>, tensor<f32>, tensor<4x5x2xf32>) {
  // CHECK: %[[BMM:.*]] = hps.matmul %arg0, %arg1 : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  %0 = hps.onnx_node "Einsum"(%a, %b) {attrs = {equation = "bij, bjk -> bik"}, domain = "", opset = 12 : i64} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  // CHECK: %[[SUM:.*]] = hps.reduce sum %arg2 {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  %1 = hps.onnx_node "Einsum"(%x) {attrs = {equation = "ij->i"}, domain = "", opset = 12 : i64} : (tensor<3x4xf32>) -> tensor<3xf32>
  // Implicit output: no label is used once, so a scalar.
  // CHECK: %[[L:.*]] = hps.reshape %arg3 {shape = array<i64: 1, 3>}
  // CHECK: %[[R:.*]] = hps.reshape %arg4 {shape = array<i64: 3, 1>}
  // CHECK: %[[DOT:.*]] = hps.matmul %[[L]], %[[R]] : (tensor<1x3xf32>, tensor<3x1xf32>) -> tensor<1x1xf32>
  // CHECK: %[[S:.*]] = hps.reshape %[[DOT]] {shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32>
  %2 = hps.onnx_node "Einsum"(%v, %w) {attrs = {equation = "i,i"}, domain = "", opset = 12 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  // "..." stands for the batch axis; the output moves k first.
  // CHECK: %[[P:.*]] = hps.matmul %arg0, %arg1
  // CHECK: %[[T:.*]] = hps.transpose %[[P]] {perm = array<i64: 2, 0, 1>} : (tensor<5x2x4xf32>) -> tensor<4x5x2xf32>
  // CHECK: return %[[BMM]], %[[SUM]], %[[S]], %[[T]]
  %3 = hps.onnx_node "Einsum"(%a, %b) {attrs = {equation = "...ij,...jk->k...i"}, domain = "", opset = 12 : i64} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<4x5x2xf32>
  return %0, %1, %2, %3 : tensor<5x2x4xf32>, tensor<3xf32>, tensor<f32>, tensor<4x5x2xf32>
}

// -----

// Attention scores: batch labels b and h, contracted d, free q and k.
// CHECK-LABEL: func @einsum_attention
func.func @einsum_attention(%q: tensor<2x3x4x5xf32>, %k: tensor<2x3x6x5xf32>) -> tensor<2x3x4x6xf32> {
  // CHECK: %[[Q:.*]] = hps.reshape %arg0 {shape = array<i64: 6, 4, 5>}
  // CHECK: %[[KT:.*]] = hps.transpose %arg1 {perm = array<i64: 0, 1, 3, 2>}
  // CHECK: %[[K:.*]] = hps.reshape %[[KT]] {shape = array<i64: 6, 5, 6>}
  // CHECK: %[[M:.*]] = hps.matmul %[[Q]], %[[K]] : (tensor<6x4x5xf32>, tensor<6x5x6xf32>) -> tensor<6x4x6xf32>
  // CHECK: hps.reshape %[[M]] {shape = array<i64: 2, 3, 4, 6>}
  %0 = hps.onnx_node "Einsum"(%q, %k) {attrs = {equation = "bhqd,bhkd->bhqk"}, domain = "", opset = 12 : i64} : (tensor<2x3x4x5xf32>, tensor<2x3x6x5xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// A pure transpose moves any element type.
// CHECK-LABEL: func @einsum_transpose_f64
func.func @einsum_transpose_f64(%t: tensor<3x4xf64>) -> tensor<4x3xf64> {
  // CHECK: hps.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<3x4xf64>) -> tensor<4x3xf64>
  %0 = hps.onnx_node "Einsum"(%t) {attrs = {equation = "ij->ji"}, domain = "", opset = 12 : i64} : (tensor<3x4xf64>) -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// -----

// A repeated label takes the diagonal: both axes moved last, viewed as one
// of n * n and gathered at multiples of n + 1 (any element type); then the
// usual sums and products. A trace sums the diagonal.
// CHECK-LABEL: func @einsum_diagonal
func.func @einsum_diagonal(%t: tensor<3x3xf32>, %b: tensor<3x2x3xi64>) -> (tensor<3xf32>, tensor<f32>, tensor<2x3xi64>) {
  // CHECK-DAG: %[[AT:.*]] = hps.constant dense<[0, 4, 8]> : tensor<3xi64>
  // CHECK: %[[FLAT:.*]] = hps.reshape %arg0 {shape = array<i64: 9>}
  // CHECK: %[[D:.*]] = hps.gather %[[FLAT]], %[[AT]] : (tensor<9xf32>, tensor<3xi64>) -> tensor<3xf32>
  %0 = hps.onnx_node "Einsum"(%t) {attrs = {equation = "ii->i"}, domain = "", opset = 12 : i64} : (tensor<3x3xf32>) -> tensor<3xf32>
  // CHECK: %[[TRACE:.*]] = hps.reduce sum %{{.*}} {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %1 = hps.onnx_node "Einsum"(%t) {attrs = {equation = "ii"}, domain = "", opset = 12 : i64} : (tensor<3x3xf32>) -> tensor<f32>
  // Labels i at axes 0 and 2: moved last around j.
  // CHECK: %[[M:.*]] = hps.transpose %arg1 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x3xi64>) -> tensor<2x3x3xi64>
  // CHECK: %[[V:.*]] = hps.reshape %[[M]] {shape = array<i64: 2, 9>}
  // CHECK: %[[G:.*]] = hps.gather %[[V]], %{{.*}} {axis = 1 : i64} : (tensor<2x9xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %2 = hps.onnx_node "Einsum"(%b) {attrs = {equation = "iji->ji"}, domain = "", opset = 12 : i64} : (tensor<3x2x3xi64>) -> tensor<2x3xi64>
  // CHECK: return %[[D]], %[[TRACE]], %[[G]]
  return %0, %1, %2 : tensor<3xf32>, tensor<f32>, tensor<2x3xi64>
}

// -----

// Stay generic: a sum of i32 (no integer reduction kernel), a malformed
// equation.
// CHECK-LABEL: func @einsum_generic
func.func @einsum_generic(%t: tensor<3x3xf32>, %d: tensor<3x4xi32>) -> (tensor<3xi32>, tensor<3xf32>) {
  // CHECK-COUNT-2: hps.onnx_node "Einsum"
  %1 = hps.onnx_node "Einsum"(%d) {attrs = {equation = "ij->i"}, domain = "", opset = 12 : i64} : (tensor<3x4xi32>) -> tensor<3xi32>
  %2 = hps.onnx_node "Einsum"(%t) {attrs = {equation = "i1->i"}, domain = "", opset = 12 : i64} : (tensor<3x3xf32>) -> tensor<3xf32>
  return %1, %2 : tensor<3xi32>, tensor<3xf32>
}

// f64 sums and products legalize like f32 ones.
// CHECK-LABEL: func @einsum_f64
func.func @einsum_f64(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>) -> (tensor<3xf64>, tensor<3x5xf64>) {
  // CHECK: hps.reduce sum %arg0 {axes = array<i64: 1>} : (tensor<3x4xf64>) -> tensor<3xf64>
  // CHECK: hps.matmul %arg0, %arg1 : (tensor<3x4xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>
  %0 = hps.onnx_node "Einsum"(%a) {attrs = {equation = "ij->i"}, domain = "", opset = 12 : i64} : (tensor<3x4xf64>) -> tensor<3xf64>
  %1 = hps.onnx_node "Einsum"(%a, %b) {attrs = {equation = "ij,jk->ik"}, domain = "", opset = 12 : i64} : (tensor<3x4xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>
  return %0, %1 : tensor<3xf64>, tensor<3x5xf64>
}

// -----

// An equation that leaves its operand as it is, declared less static: a
// view of the argument takes the declared type (the argument itself
// cannot; before, "the replacement's type differs"), then the signature
// becomes static and the view folds away.
// CHECK-LABEL: func @einsum_identity_dynamic
// CHECK-SAME: -> tensor<2x3xf32>
func.func @einsum_identity_dynamic(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  // CHECK-NEXT: return %arg0
  %0 = hps.onnx_node "Einsum"(%x) {attrs = {equation = "ij->ij"}, domain = "", opset = 12 : i64} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
