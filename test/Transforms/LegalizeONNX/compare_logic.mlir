// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Comparisons produce i1 and broadcast.
// CHECK-LABEL: func @compare
func.func @compare(%a: tensor<2x4xf32>, %b: tensor<1xf32>, %i: tensor<4xi64>, %j: tensor<2x1xi64>) -> (tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>) {
  // CHECK: hps.equal %arg0, %arg1 : tensor<2x4xf32>, tensor<1xf32> -> tensor<2x4xi1>
  %0 = hps.onnx_node "Equal"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xi1>
  // CHECK: hps.equal %arg2, %arg3 : tensor<4xi64>, tensor<2x1xi64> -> tensor<2x4xi1>
  %1 = hps.onnx_node "Equal"(%i, %j) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi64>, tensor<2x1xi64>) -> tensor<2x4xi1>
  // CHECK: hps.less %arg0, %arg1 : tensor<2x4xf32>, tensor<1xf32> -> tensor<2x4xi1>
  %2 = hps.onnx_node "Less"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xi1>
  // CHECK: hps.greater %arg1, %arg0 : tensor<1xf32>, tensor<2x4xf32> -> tensor<2x4xi1>
  %3 = hps.onnx_node "Greater"(%b, %a) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  // CHECK: hps.less_equal %arg0, %arg1 : tensor<2x4xf32>, tensor<1xf32> -> tensor<2x4xi1>
  %4 = hps.onnx_node "LessOrEqual"(%a, %b) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xi1>
  // CHECK: hps.greater_equal %arg0, %arg1 : tensor<2x4xf32>, tensor<1xf32> -> tensor<2x4xi1>
  %5 = hps.onnx_node "GreaterOrEqual"(%a, %b) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xi1>
  // LessOrEqual and GreaterOrEqual first appear in opset 12.
  // CHECK: hps.onnx_node "LessOrEqual"{{.*}}opset = 11
  %6 = hps.onnx_node "LessOrEqual"(%a, %b) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xi1>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>
}

// -----

// CHECK-LABEL: func @logic
func.func @logic(%p: tensor<2x4xi1>, %q: tensor<4xi1>) -> (tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>) {
  // CHECK: hps.and %arg0, %arg1 : tensor<2x4xi1>, tensor<4xi1> -> tensor<2x4xi1>
  %0 = hps.onnx_node "And"(%p, %q) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  // CHECK: hps.or %arg1, %arg0 : tensor<4xi1>, tensor<2x4xi1> -> tensor<2x4xi1>
  %1 = hps.onnx_node "Or"(%q, %p) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
  // CHECK: hps.xor %arg0, %arg1 : tensor<2x4xi1>, tensor<4xi1> -> tensor<2x4xi1>
  %2 = hps.onnx_node "Xor"(%p, %q) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  return %0, %1, %2 : tensor<2x4xi1>, tensor<2x4xi1>, tensor<2x4xi1>
}
