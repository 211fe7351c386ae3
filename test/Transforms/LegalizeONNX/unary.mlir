// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @plain
func.func @plain(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: hps.relu %arg0 {device = #hps.device<"cpu.x">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "", opset = 14 : i64, device = #hps.device<"cpu.x">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.sigmoid
  %1 = hps.onnx_node "Sigmoid"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.tanh
  %2 = hps.onnx_node "Tanh"(%x) {attrs = {}, domain = "ai.onnx", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.exp
  %3 = hps.onnx_node "Exp"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.log
  %4 = hps.onnx_node "Log"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.sqrt
  %5 = hps.onnx_node "Sqrt"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.erf
  %6 = hps.onnx_node "Erf"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.round
  %7 = hps.onnx_node "Round"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.hard_swish
  %8 = hps.onnx_node "HardSwish"(%x) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.softplus
  %9 = hps.onnx_node "Softplus"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @more_plain
func.func @more_plain(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  // CHECK: hps.abs
  %0 = hps.onnx_node "Abs"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.neg
  %1 = hps.onnx_node "Neg"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.reciprocal
  %2 = hps.onnx_node "Reciprocal"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.floor
  %3 = hps.onnx_node "Floor"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.ceil
  %4 = hps.onnx_node "Ceil"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.sin
  %5 = hps.onnx_node "Sin"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.cos
  %6 = hps.onnx_node "Cos"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.sign
  %7 = hps.onnx_node "Sign"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.softsign
  %8 = hps.onnx_node "Softsign"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.not
  %9 = hps.onnx_node "Not"(%b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}

// -----

// Attributes and their ONNX defaults (which equal the hps defaults, so
// they print elided).
// CHECK-LABEL: func @with_attrs
func.func @with_attrs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.leaky_relu %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "LeakyRelu"(%x) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.leaky_relu %arg0 {alpha = 2.000000e-01 : f32}
  %1 = hps.onnx_node "LeakyRelu"(%x) {attrs = {alpha = 0.2 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.elu %arg0 : tensor<4xf32>
  %2 = hps.onnx_node "Elu"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.selu %arg0 : tensor<4xf32>
  %3 = hps.onnx_node "Selu"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.hard_sigmoid %arg0 {beta = 2.500000e-01 : f32}
  %4 = hps.onnx_node "HardSigmoid"(%x) {attrs = {beta = 0.25 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.celu %arg0 {alpha = 3.000000e+00 : f32}
  %5 = hps.onnx_node "Celu"(%x) {attrs = {alpha = 3.0 : f32}, domain = "", opset = 12 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.thresholded_relu %arg0 : tensor<4xf32>
  %6 = hps.onnx_node "ThresholdedRelu"(%x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Ops outside their opset range, or in another domain, stay generic.
// CHECK-LABEL: func @out_of_range
func.func @out_of_range(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.onnx_node "HardSwish"
  %0 = hps.onnx_node "HardSwish"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Relu"{{.*}}domain = "com.example"
  %1 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "com.example", opset = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Celu"
  %2 = hps.onnx_node "Celu"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
