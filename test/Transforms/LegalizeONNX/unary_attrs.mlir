// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Unary ops with float attributes. An omitted attribute takes its ONNX
// default, which equals the hps default and so prints elided; any other
// value shows.

// CHECK-LABEL: func @leaky_relu
func.func @leaky_relu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.leaky_relu %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "LeakyRelu"(%x) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.leaky_relu %arg0 {alpha = 2.000000e-01 : f32} : tensor<4xf32>
  %1 = hps.onnx_node "LeakyRelu"(%x) {attrs = {alpha = 0.2 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @elu
func.func @elu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.elu %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "Elu"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.elu %arg0 {alpha = 5.000000e-01 : f32} : tensor<4xf32>
  %1 = hps.onnx_node "Elu"(%x) {attrs = {alpha = 0.5 : f32}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @selu
func.func @selu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.selu %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "Selu"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.selu %arg0 {alpha = 2.000000e+00 : f32, gamma = 3.000000e+00 : f32} : tensor<4xf32>
  %1 = hps.onnx_node "Selu"(%x) {attrs = {alpha = 2.0 : f32, gamma = 3.0 : f32}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // Only gamma given: alpha keeps its default.
  // CHECK: hps.selu %arg0 {gamma = 1.000000e+00 : f32} : tensor<4xf32>
  %2 = hps.onnx_node "Selu"(%x) {attrs = {gamma = 1.0 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @hard_sigmoid
func.func @hard_sigmoid(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.hard_sigmoid %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "HardSigmoid"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.hard_sigmoid %arg0 {beta = 2.500000e-01 : f32} : tensor<4xf32>
  %1 = hps.onnx_node "HardSigmoid"(%x) {attrs = {beta = 0.25 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Celu is read from opset 12, ThresholdedRelu from opset 10; earlier they
// stay generic.
// CHECK-LABEL: func @celu_thresholded_relu
func.func @celu_thresholded_relu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.celu %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "Celu"(%x) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.celu %arg0 {alpha = 3.000000e+00 : f32} : tensor<4xf32>
  %1 = hps.onnx_node "Celu"(%x) {attrs = {alpha = 3.0 : f32}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Celu"{{.*}}opset = 11
  %2 = hps.onnx_node "Celu"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.thresholded_relu %arg0 : tensor<4xf32>
  %3 = hps.onnx_node "ThresholdedRelu"(%x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.thresholded_relu %arg0 {alpha = 2.000000e+00 : f32} : tensor<4xf32>
  %4 = hps.onnx_node "ThresholdedRelu"(%x) {attrs = {alpha = 2.0 : f32}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "ThresholdedRelu"{{.*}}opset = 9
  %5 = hps.onnx_node "ThresholdedRelu"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
