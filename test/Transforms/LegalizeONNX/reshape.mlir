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

// CHECK-LABEL: func @flatten
func.func @flatten(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<6x4xf32>, tensor<1x24xf32>) {
  // CHECK: hps.flatten %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %0 = hps.onnx_node "Flatten"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: hps.flatten %arg0 {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = hps.onnx_node "Flatten"(%x) {attrs = {axis = -1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: hps.flatten %arg0 {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  %2 = hps.onnx_node "Flatten"(%x) {attrs = {axis = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  return %0, %1, %2 : tensor<2x12xf32>, tensor<6x4xf32>, tensor<1x24xf32>
}
