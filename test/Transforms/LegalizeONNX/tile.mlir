// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Tile (opsets 6-17) with constant repeats: a unit axis before each
// repeated one, broadcast to the count and folded back in (whole copies
// one after another).
// CHECK-LABEL: func @tile
func.func @tile(%x: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {
  %r = hps.constant dense<[2, 1]> : tensor<2xi64>
  // CHECK: %[[S:.*]] = hps.reshape %arg0 {shape = array<i64: 1, 2, 3>} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  // CHECK: %[[E:.*]] = hps.expand %[[S]] {shape = array<i64: 2, 2, 3>} : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  // CHECK: %[[T:.*]] = hps.reshape %[[E]] {shape = array<i64: 4, 3>} : (tensor<2x2x3xf32>) -> tensor<4x3xf32>
  %0 = hps.onnx_node "Tile"(%x, %r) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %one = hps.constant dense<1> : tensor<2xi64>
  %1 = hps.onnx_node "Tile"(%x, %one) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  // CHECK: return %[[T]], %arg0
  return %0, %1 : tensor<4x3xf32>, tensor<2x3xf32>
}

// -----

// Stays generic: repeats from a graph input; a zero repeat.
// CHECK-LABEL: func @tile_generic
func.func @tile_generic(%x: tensor<2x3xf32>, %r: tensor<2xi64>) -> (tensor<?x?xf32>, tensor<0x3xf32>) {
  // CHECK: hps.onnx_node "Tile"(%arg0, %arg1)
  %0 = hps.onnx_node "Tile"(%x, %r) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %z = hps.constant dense<[0, 1]> : tensor<2xi64>
  // CHECK: hps.onnx_node "Tile"
  %1 = hps.onnx_node "Tile"(%x, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<0x3xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<0x3xf32>
}

// -----

// An empty input: the views keep its empty axis (allowzero; a 0 in a
// reshape's shape otherwise copies the input's extent, and the verifier
// refused the view [2, 0, 3] -> [1, 2, 0, 3]).
// CHECK-LABEL: func @tile_empty
func.func @tile_empty(%x: tensor<2x0x3xf32>) -> tensor<4x0x3xf32> {
  %r = hps.constant dense<[2, 1, 1]> : tensor<3xi64>
  // CHECK: hps.reshape %arg0 {allowzero, shape = array<i64: 1, 2, 0, 3>}
  // CHECK-NOT: hps.onnx_node
  %0 = hps.onnx_node "Tile"(%x, %r) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x0x3xf32>, tensor<3xi64>) -> tensor<4x0x3xf32>
  return %0 : tensor<4x0x3xf32>
}
