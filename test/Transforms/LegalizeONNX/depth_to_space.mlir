// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// DepthToSpace (DCR, the default, and CRD from opset 11) and SpaceToDepth:
// reshape -> transpose -> reshape on a static [N, C, H, W].
// CHECK-LABEL: func @block_shuffle
func.func @block_shuffle(%x: tensor<1x8x2x3xf32>, %y: tensor<1x2x4x6xf32>) -> (tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x8x2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.reshape %arg0 {shape = array<i64: 1, 2, 2, 2, 2, 3>}
  // CHECK: %[[B:.*]] = hps.transpose %[[A]] {perm = array<i64: 0, 3, 4, 1, 5, 2>}
  // CHECK: %[[DCR:.*]] = hps.reshape %[[B]] {shape = array<i64: 1, 2, 4, 6>}
  %0 = hps.onnx_node "DepthToSpace"(%x) {attrs = {blocksize = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  // CHECK: hps.transpose {{.*}} {perm = array<i64: 0, 1, 4, 2, 5, 3>}
  // CHECK: %[[CRD:.*]] = hps.reshape {{.*}} {shape = array<i64: 1, 2, 4, 6>}
  %1 = hps.onnx_node "DepthToSpace"(%x) {attrs = {blocksize = 2 : i64, mode = "CRD"}, domain = "", opset = 11 : i64} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  // CHECK: hps.reshape %arg1 {shape = array<i64: 1, 2, 2, 2, 3, 2>}
  // CHECK: hps.transpose {{.*}} {perm = array<i64: 0, 3, 5, 1, 2, 4>}
  // CHECK: %[[S2D:.*]] = hps.reshape {{.*}} {shape = array<i64: 1, 8, 2, 3>}
  %2 = hps.onnx_node "SpaceToDepth"(%y) {attrs = {blocksize = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<1x2x4x6xf32>) -> tensor<1x8x2x3xf32>
  // CHECK: return %[[DCR]], %[[CRD]], %[[S2D]]
  return %0, %1, %2 : tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x8x2x3xf32>
}

// -----

// Stays generic: channels not divisible by blocksize^2; a dynamic extent.
// CHECK-LABEL: func @block_shuffle_generic
func.func @block_shuffle_generic(%x: tensor<1x6x2x3xf32>, %d: tensor<?x8x2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  // CHECK: hps.onnx_node "DepthToSpace"(%arg0)
  %0 = hps.onnx_node "DepthToSpace"(%x) {attrs = {blocksize = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<1x6x2x3xf32>) -> tensor<*xf32>
  // CHECK: hps.onnx_node "DepthToSpace"(%arg1)
  %1 = hps.onnx_node "DepthToSpace"(%d) {attrs = {blocksize = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<?x8x2x3xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
