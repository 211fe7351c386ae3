// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @concat
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  // CHECK: hps.concat %arg0, %arg1 {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = hps.onnx_node "Concat"(%a, %b) {attrs = {axis = -1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Split sizes: attribute (before 13), constant input (13+), or equal parts.
// CHECK-LABEL: func @split
func.func @split(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<1x4xf32>, tensor<5x4xf32>, tensor<6x2xf32>, tensor<6x2xf32>) {
  // CHECK: hps.split %arg0 {axis = 0 : i64, sizes = array<i64: 2, 4>}
  %0:2 = hps.onnx_node "Split"(%x) {attrs = {split = array<i64: 2, 4>}, domain = "", opset = 11 : i64} : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  %s = hps.constant dense<[1, 5]> : tensor<2xi64>
  // CHECK: hps.split %arg0 {axis = 0 : i64, sizes = array<i64: 1, 5>}
  %1:2 = hps.onnx_node "Split"(%x, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<6x4xf32>, tensor<2xi64>) -> (tensor<1x4xf32>, tensor<5x4xf32>)
  // CHECK: hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 2, 2>}
  %2:2 = hps.onnx_node "Split"(%x) {attrs = {axis = -1 : i64}, domain = "", opset = 7 : i64} : (tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xf32>)
  return %0#0, %0#1, %1#0, %1#1, %2#0, %2#1 : tensor<2x4xf32>, tensor<4x4xf32>, tensor<1x4xf32>, tensor<5x4xf32>, tensor<6x2xf32>, tensor<6x2xf32>
}

// -----

// Slice: attributes before opset 10, constant inputs (with steps) after.
// CHECK-LABEL: func @slice
func.func @slice(%x: tensor<10x8xf32>, %dyn: tensor<1xi64>) -> (tensor<3x8xf32>, tensor<10x4xf32>, tensor<4x8xf32>, tensor<?x8xf32>) {
  // CHECK: hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<10x8xf32>) -> tensor<3x8xf32>
  %0 = hps.onnx_node "Slice"(%x) {attrs = {starts = array<i64: 1>, ends = array<i64: 4>}, domain = "", opset = 9 : i64} : (tensor<10x8xf32>) -> tensor<3x8xf32>
  %st = hps.constant dense<[-1]> : tensor<1xi64>
  %en = hps.constant dense<[-9223372036854775807]> : tensor<1xi64>
  %ax = hps.constant dense<[1]> : tensor<1xi64>
  %sp = hps.constant dense<[-2]> : tensor<1xi64>
  // CHECK: hps.slice %arg0 {axes = array<i64: 1>, ends = array<i64: -9223372036854775807>, starts = array<i64: -1>, steps = array<i64: -2>} : (tensor<10x8xf32>) -> tensor<10x4xf32>
  %1 = hps.onnx_node "Slice"(%x, %st, %en, %ax, %sp) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<10x4xf32>
  %s2 = hps.constant dense<[2]> : tensor<1xi64>
  %e2 = hps.constant dense<[100]> : tensor<1xi64>
  %n = hps.none
  // Omitted axes and steps default to 0.. and 1; ends clamp.
  // CHECK: hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 100>, starts = array<i64: 2>, steps = array<i64: 1>} : (tensor<10x8xf32>) -> tensor<8x8xf32>
  %2 = hps.onnx_node "Slice"(%x, %s2, %e2, %n, %n) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<8x8xf32>
  // CHECK: hps.onnx_node "Slice"
  %3 = hps.onnx_node "Slice"(%x, %s2, %dyn) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  %4 = hps.slice %2 {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %4, %3 : tensor<3x8xf32>, tensor<10x4xf32>, tensor<4x8xf32>, tensor<?x8xf32>
}
