// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @concat
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<?x1xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x9xf32>, tensor<2x3xf32>) {
  // Opsets 7-10: a non-negative axis.
  // CHECK: hps.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = hps.onnx_node "Concat"(%a, %b) {attrs = {axis = 1 : i64}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // Opset 11+: negative axes count from the back.
  // CHECK: hps.concat %arg0, %arg1 {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1 = hps.onnx_node "Concat"(%a, %b) {attrs = {axis = -1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // Three inputs, one with a dynamic extent.
  // CHECK: hps.concat %arg0, %arg1, %arg2 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<?x1xf32>) -> tensor<2x9xf32>
  %2 = hps.onnx_node "Concat"(%a, %b, %c) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<?x1xf32>) -> tensor<2x9xf32>
  // A single input is the input itself.
  %4 = hps.onnx_node "Concat"(%a) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return {{.*}}, %{{.*}}, %{{.*}}, %arg0
  return %0, %1, %2, %4 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x9xf32>, tensor<2x3xf32>
}

// -----

// Constant shape vectors fold.
// CHECK-LABEL: func @concat_constants
func.func @concat_constants() -> tensor<3xi64> {
  %a = hps.constant dense<[1, 2]> : tensor<2xi64>
  %b = hps.constant dense<[3]> : tensor<1xi64>
  // CHECK: %[[C:.*]] = hps.constant dense<[1, 2, 3]> : tensor<3xi64>
  // CHECK-NEXT: return %[[C]]
  %0 = hps.onnx_node "Concat"(%a, %b) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Stays generic: no axis (required), an axis out of range, shapes that
// disagree off the axis.
// CHECK-LABEL: func @concat_generic
func.func @concat_generic(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x6xf32>) {
  // CHECK: hps.onnx_node "Concat"(%arg0, %arg0) {attrs = {}
  %0 = hps.onnx_node "Concat"(%a, %a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: hps.onnx_node "Concat"(%arg0, %arg0) {attrs = {axis = 2 : i64}
  %1 = hps.onnx_node "Concat"(%a, %a) {attrs = {axis = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK: hps.onnx_node "Concat"(%arg0, %arg1) {attrs = {axis = 1 : i64}
  %2 = hps.onnx_node "Concat"(%a, %b) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x6xf32>
}
