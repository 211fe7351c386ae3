// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @arithmetic
func.func @arithmetic(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: hps.add %arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %0 = hps.onnx_node "Add"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.sub
  %1 = hps.onnx_node "Sub"(%a, %b) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.mul
  %2 = hps.onnx_node "Mul"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.div
  %3 = hps.onnx_node "Div"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.pow
  %4 = hps.onnx_node "Pow"(%a, %b) {attrs = {}, domain = "", opset = 15 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.prelu %arg0, %arg1
  %5 = hps.onnx_node "PRelu"(%a, %b) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @mod
func.func @mod(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  // CHECK: hps.mod %arg0, %arg1 : tensor<4xi32>
  %0 = hps.onnx_node "Mod"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: hps.mod %arg0, %arg1 {fmod} : tensor<4xi32>
  %1 = hps.onnx_node "Mod"(%a, %b) {attrs = {fmod = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func @compare_and_logic
func.func @compare_and_logic(%a: tensor<4xf32>, %b: tensor<1xf32>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK: hps.equal %arg0, %arg1 : tensor<4xf32>, tensor<1xf32> -> tensor<4xi1>
  %0 = hps.onnx_node "Equal"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  // CHECK: hps.less
  %1 = hps.onnx_node "Less"(%a, %b) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  // CHECK: hps.greater
  %2 = hps.onnx_node "Greater"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  // CHECK: hps.less_equal
  %3 = hps.onnx_node "LessOrEqual"(%a, %b) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  // CHECK: hps.greater_equal
  %4 = hps.onnx_node "GreaterOrEqual"(%a, %b) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>
  // CHECK: hps.and
  %5 = hps.onnx_node "And"(%p, %q) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: hps.or
  %6 = hps.onnx_node "Or"(%p, %q) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: hps.xor
  %7 = hps.onnx_node "Xor"(%p, %q) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}
