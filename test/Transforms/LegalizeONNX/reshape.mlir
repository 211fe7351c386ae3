// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @constant_shape
func.func @constant_shape(%x: tensor<2x3x4xf32>, %z: tensor<0x3xf32>) -> (tensor<2x12xf32>, tensor<6x4xf32>, tensor<3x0xf32>) {
  %s = hps.constant dense<[0, -1]> : tensor<2xi64>
  %t = hps.weight "shape" dense<[6, 4]> : tensor<2xi64>
  // 0 copies the input dim, -1 is inferred.
  // CHECK: hps.reshape %arg0 {shape = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %0 = hps.onnx_node "Reshape"(%x, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  // Old exporters keep the target in an initializer.
  // CHECK: hps.reshape %arg0 {shape = array<i64: 6, 4>}
  %1 = hps.onnx_node "Reshape"(%x, %t) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  // Opset 14 allowzero: 0 is a literal zero.
  %u = hps.constant dense<[3, 0]> : tensor<2xi64>
  // CHECK: hps.reshape %arg1 {allowzero, shape = array<i64: 3, 0>} : (tensor<0x3xf32>) -> tensor<3x0xf32>
  %2 = hps.onnx_node "Reshape"(%z, %u) {attrs = {allowzero = 1 : i64}, domain = "", opset = 14 : i64} : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<3x0xf32>
  return %0, %1, %2 : tensor<2x12xf32>, tensor<6x4xf32>, tensor<3x0xf32>
}

// -----

// A target built from Shape/Gather/Unsqueeze/Concat with a dynamic batch:
// the batch of the input itself becomes 0 (copy), static extents fold.
// CHECK-LABEL: func @symbolic_copy
func.func @symbolic_copy(%x: tensor<?x64x64xf32>) -> tensor<?x64x4x16xf32> {
  %i0 = hps.constant dense<0> : tensor<i64>
  %i1 = hps.constant dense<1> : tensor<i64>
  %c4 = hps.constant dense<[4, 16]> : tensor<2xi64>
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x64x64xf32>) -> tensor<3xi64>
  %b = hps.onnx_node "Gather"(%shape, %i0) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %s = hps.onnx_node "Gather"(%shape, %i1) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = hps.constant dense<[0]> : tensor<1xi64>
  %bu = hps.onnx_node "Unsqueeze"(%b, %axes) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %su = hps.onnx_node "Unsqueeze"(%s, %axes) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %target = hps.onnx_node "Concat"(%bu, %su, %c4) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  // CHECK-NOT: hps.shape
  // CHECK: hps.reshape %arg0 {shape = array<i64: 0, 64, 4, 16>} : (tensor<?x64x64xf32>) -> tensor<?x64x4x16xf32>
  // CHECK-NOT: hps.onnx_node
  %r = hps.onnx_node "Reshape"(%x, %target) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x64x64xf32>, tensor<4xi64>) -> tensor<?x64x4x16xf32>
  return %r : tensor<?x64x4x16xf32>
}

// -----

// The batch of another tensor is unknown here: it becomes the inferred -1.
// Two unknown extents cannot be resolved: the node stays generic.
// CHECK-LABEL: func @symbolic_infer
func.func @symbolic_infer(%x: tensor<?x8xf32>, %y: tensor<?x?xf32>) -> (tensor<?x2x4xf32>, tensor<?x?xf32>) {
  %i0 = hps.constant dense<0> : tensor<1xi64>
  %i1 = hps.constant dense<1> : tensor<1xi64>
  %rest = hps.constant dense<[2, 4]> : tensor<2xi64>
  %ys = hps.onnx_node "Shape"(%y) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x?xf32>) -> tensor<2xi64>
  %b = hps.onnx_node "Gather"(%ys, %i0) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %t = hps.onnx_node "Concat"(%b, %rest) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  // CHECK: hps.reshape %arg0 {shape = array<i64: -1, 2, 4>}
  %0 = hps.onnx_node "Reshape"(%x, %t) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  // CHECK: hps.onnx_node "Reshape"
  %1 = hps.onnx_node "Reshape"(%x, %ys) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x2x4xf32>, tensor<?x?xf32>
}

// -----

// The chain may slice, cast and squeeze shape vectors; a Shape with a start
// (opset 15) selects a suffix.
// CHECK-LABEL: func @symbolic_slice_cast
func.func @symbolic_slice_cast(%x: tensor<?x4x6xf32>) -> (tensor<?x24xf32>, tensor<?x2x6xf32>, tensor<?x2x12xf32>) {
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x4x6xf32>) -> tensor<3xi64>
  %s0 = hps.constant dense<[0]> : tensor<1xi64>
  %e1 = hps.constant dense<[1]> : tensor<1xi64>
  %head = hps.onnx_node "Slice"(%shape, %s0, %e1) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %h32 = hps.onnx_node "Cast"(%head) {attrs = {to = 6 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>) -> tensor<1xi32>
  %h64 = hps.onnx_node "Cast"(%h32) {attrs = {to = 7 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi32>) -> tensor<1xi64>
  %minus = hps.constant dense<[24]> : tensor<1xi64>
  %t = hps.onnx_node "Concat"(%h64, %minus) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // CHECK: hps.reshape %arg0 {shape = array<i64: 0, 24>} : (tensor<?x4x6xf32>) -> tensor<?x24xf32>
  %0 = hps.onnx_node "Reshape"(%x, %t) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x4x6xf32>, tensor<2xi64>) -> tensor<?x24xf32>
  %tail = hps.onnx_node "Shape"(%x) {attrs = {start = -1 : i64}, domain = "", opset = 15 : i64} : (tensor<?x4x6xf32>) -> tensor<1xi64>
  %two = hps.constant dense<[-1, 2]> : tensor<2xi64>
  %u = hps.onnx_node "Concat"(%two, %tail) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %twelve = hps.constant dense<[12]> : tensor<1xi64>
  %v = hps.onnx_node "Concat"(%head, %two, %twelve) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<1xi64>) -> tensor<4xi64>
  %s1 = hps.constant dense<[1]> : tensor<1xi64>
  %e9 = hps.constant dense<[9]> : tensor<1xi64>
  %w = hps.onnx_node "Slice"(%v, %s1, %e9) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  // The static tail of the shape is known.
  // CHECK: hps.reshape %arg0 {shape = array<i64: -1, 2, 6>} : (tensor<?x4x6xf32>) -> tensor<?x2x6xf32>
  %1 = hps.onnx_node "Reshape"(%x, %u) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<?x4x6xf32>, tensor<3xi64>) -> tensor<?x2x6xf32>
  // Slicing [batch, -1, 2, 12] from 1 drops the only unknown.
  // CHECK: hps.reshape %arg0 {shape = array<i64: -1, 2, 12>} : (tensor<?x4x6xf32>) -> tensor<?x2x12xf32>
  %2 = hps.onnx_node "Reshape"(%x, %w) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<?x4x6xf32>, tensor<3xi64>) -> tensor<?x2x12xf32>
  // CHECK-NOT: hps.onnx_node
  return %0, %1, %2 : tensor<?x24xf32>, tensor<?x2x6xf32>, tensor<?x2x12xf32>
}

// -----

// With allowzero a dynamic dim of the input cannot be copied with 0; a
// single unknown still becomes -1.
// CHECK-LABEL: func @symbolic_allowzero
func.func @symbolic_allowzero(%x: tensor<?x8xf32>) -> tensor<?x2x4xf32> {
  %shape = hps.onnx_node "Shape"(%x) {attrs = {end = 1 : i64}, domain = "", opset = 15 : i64} : (tensor<?x8xf32>) -> tensor<1xi64>
  %rest = hps.constant dense<[2, 4]> : tensor<2xi64>
  %t = hps.onnx_node "Concat"(%shape, %rest) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  // CHECK: hps.reshape %arg0 {allowzero, shape = array<i64: -1, 2, 4>}
  %0 = hps.onnx_node "Reshape"(%x, %t) {attrs = {allowzero = 1 : i64}, domain = "", opset = 14 : i64} : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}

// -----

// Stays generic: allowzero before opset 14, a non-constant target, an
// unknown beside a literal -1, a target the element count rules out.
// CHECK-LABEL: func @reshape_generic
func.func @reshape_generic(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>, %d: tensor<?x8xf32>) -> (tensor<6x4xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<5x5xf32>) {
  %t = hps.constant dense<[6, 4]> : tensor<2xi64>
  // CHECK: hps.onnx_node "Reshape"(%arg0, %{{.*}}) {attrs = {allowzero = 0 : i64}
  %0 = hps.onnx_node "Reshape"(%x, %t) {attrs = {allowzero = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  // CHECK: hps.onnx_node "Reshape"(%arg0, %arg1)
  %1 = hps.onnx_node "Reshape"(%x, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %shape = hps.onnx_node "Shape"(%d) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x8xf32>) -> tensor<2xi64>
  %i0 = hps.constant dense<[0]> : tensor<1xi64>
  %b = hps.onnx_node "Gather"(%shape, %i0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = hps.constant dense<[-1, 2]> : tensor<2xi64>
  %u = hps.onnx_node "Concat"(%b, %m) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  // CHECK: hps.onnx_node "Reshape"(%arg0, %{{.*}})
  %2 = hps.onnx_node "Reshape"(%x, %u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %f = hps.constant dense<[5, 5]> : tensor<2xi64>
  // CHECK: hps.onnx_node "Reshape"(%arg0, %{{.*}})
  %3 = hps.onnx_node "Reshape"(%x, %f) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x5xf32>
  return %0, %1, %2, %3 : tensor<6x4xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<5x5xf32>
}
