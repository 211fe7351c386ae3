// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 1-9: starts/ends/axes attributes; axes default to 0..n-1.
// CHECK-LABEL: func @slice_7
func.func @slice_7(%x: tensor<10x8xf32>) -> (tensor<3x8xf32>, tensor<10x2xf32>, tensor<2x5xf32>) {
  // CHECK: hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<10x8xf32>) -> tensor<3x8xf32>
  %0 = hps.onnx_node "Slice"(%x) {attrs = {starts = array<i64: 1>, ends = array<i64: 4>}, domain = "", opset = 7 : i64} : (tensor<10x8xf32>) -> tensor<3x8xf32>
  // CHECK: hps.slice %arg0 {axes = array<i64: 1>, ends = array<i64: 1000>, starts = array<i64: 6>, steps = array<i64: 1>} : (tensor<10x8xf32>) -> tensor<10x2xf32>
  %1 = hps.onnx_node "Slice"(%x) {attrs = {axes = array<i64: 1>, starts = array<i64: 6>, ends = array<i64: 1000>}, domain = "", opset = 9 : i64} : (tensor<10x8xf32>) -> tensor<10x2xf32>
  // CHECK: hps.slice %arg0 {axes = array<i64: 0, 1>, ends = array<i64: -1, 5>, starts = array<i64: -3, 0>, steps = array<i64: 1, 1>} : (tensor<10x8xf32>) -> tensor<2x5xf32>
  %2 = hps.onnx_node "Slice"(%x) {attrs = {starts = array<i64: -3, 0>, ends = array<i64: -1, 5>}, domain = "", opset = 8 : i64} : (tensor<10x8xf32>) -> tensor<2x5xf32>
  return %0, %1, %2 : tensor<3x8xf32>, tensor<10x2xf32>, tensor<2x5xf32>
}

// -----

// Opset 10: constant inputs starts, ends, optional axes and steps.
// CHECK-LABEL: func @slice_10
func.func @slice_10(%x: tensor<10x8xf32>) -> (tensor<8x8xf32>, tensor<10x3xf32>) {
  %s = hps.constant dense<[2]> : tensor<1xi64>
  %e = hps.constant dense<[100]> : tensor<1xi32>
  %n = hps.none
  // Omitted axes and steps default to 0.. and 1; ends clamp.
  // CHECK: hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 100>, starts = array<i64: 2>, steps = array<i64: 1>} : (tensor<10x8xf32>) -> tensor<8x8xf32>
  %0 = hps.onnx_node "Slice"(%x, %s, %e, %n, %n) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi32>, none, none) -> tensor<8x8xf32>
  %a = hps.constant dense<[1]> : tensor<1xi64>
  %st = hps.constant dense<[3]> : tensor<1xi64>
  %z = hps.constant dense<[0]> : tensor<1xi64>
  // CHECK: hps.slice %arg0 {axes = array<i64: 1>, ends = array<i64: 100>, starts = array<i64: 0>, steps = array<i64: 3>} : (tensor<10x8xf32>) -> tensor<10x3xf32>
  %1 = hps.onnx_node "Slice"(%x, %z, %e, %a, %st) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi32>, tensor<1xi64>, tensor<1xi64>) -> tensor<10x3xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<10x3xf32>
}

// -----

// Opset 11+: negative axes and steps (reversed, strided).
// CHECK-LABEL: func @slice_11
func.func @slice_11(%x: tensor<10x8xf32>) -> tensor<10x4xf32> {
  %st = hps.constant dense<[-1]> : tensor<1xi64>
  %en = hps.constant dense<[-9223372036854775807]> : tensor<1xi64>
  %ax = hps.constant dense<[-1]> : tensor<1xi64>
  %sp = hps.constant dense<[-2]> : tensor<1xi64>
  // CHECK: hps.slice %arg0 {axes = array<i64: -1>, ends = array<i64: -9223372036854775807>, starts = array<i64: -1>, steps = array<i64: -2>} : (tensor<10x8xf32>) -> tensor<10x4xf32>
  %0 = hps.onnx_node "Slice"(%x, %st, %en, %ax, %sp) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}

// -----

// A slice of a constant folds.
// CHECK-LABEL: func @slice_fold
func.func @slice_fold() -> tensor<2xi64> {
  %c = hps.constant dense<[5, 6, 7, 8]> : tensor<4xi64>
  %s = hps.constant dense<[1]> : tensor<1xi64>
  %e = hps.constant dense<[3]> : tensor<1xi64>
  // CHECK: %[[C:.*]] = hps.constant dense<[6, 7]> : tensor<2xi64>
  // CHECK-NEXT: return %[[C]]
  %0 = hps.onnx_node "Slice"(%c, %s, %e) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Stays generic: bounds, axes or steps that are not constants, a zero
// step, the attribute form at opset 10, starts/ends of different lengths.
// CHECK-LABEL: func @slice_generic
func.func @slice_generic(%x: tensor<10x8xf32>, %dyn: tensor<1xi64>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %s = hps.constant dense<[2]> : tensor<1xi64>
  %s2 = hps.constant dense<[2, 3]> : tensor<2xi64>
  %zero = hps.constant dense<[0]> : tensor<1xi64>
  // CHECK: hps.onnx_node "Slice"(%arg0, %{{.*}}, %arg1)
  %0 = hps.onnx_node "Slice"(%x, %s, %dyn) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  // CHECK: hps.onnx_node "Slice"(%arg0, %{{.*}}, %{{.*}}, %arg1)
  %1 = hps.onnx_node "Slice"(%x, %s, %s, %dyn) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  // CHECK: hps.onnx_node "Slice"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %arg1)
  %2 = hps.onnx_node "Slice"(%x, %s, %s, %zero, %dyn) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  // CHECK: hps.onnx_node "Slice"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
  %3 = hps.onnx_node "Slice"(%x, %s, %s, %zero, %zero) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  // CHECK: hps.onnx_node "Slice"(%arg0) {attrs = {ends
  %4 = hps.onnx_node "Slice"(%x) {attrs = {starts = array<i64: 1>, ends = array<i64: 4>}, domain = "", opset = 10 : i64} : (tensor<10x8xf32>) -> tensor<?x8xf32>
  // CHECK: hps.onnx_node "Slice"(%arg0, %{{.*}}, %{{.*}})
  %5 = hps.onnx_node "Slice"(%x, %s2, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<10x8xf32>, tensor<2xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
