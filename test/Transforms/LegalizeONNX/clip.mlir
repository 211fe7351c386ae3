// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-10: min/max attributes, defaulting to the float range.
// CHECK-LABEL: func @attrs
func.func @attrs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.clip %arg0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %0 = hps.onnx_node "Clip"(%x) {attrs = {min = 0.0 : f32, max = 6.0 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {max = 3.4028234663852886E+38 : f64, min = -1.000000e+00 : f64}
  %1 = hps.onnx_node "Clip"(%x) {attrs = {min = -1.0 : f32}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Opset 11+: optional constant inputs; an omitted bound is open.
// CHECK-LABEL: func @inputs
func.func @inputs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = hps.none
  %lo = hps.constant dense<-2.0> : tensor<f32>
  %hi = hps.constant dense<2.0> : tensor<f32>
  // CHECK: hps.clip %arg0 {max = 2.000000e+00 : f64, min = -2.000000e+00 : f64}
  %0 = hps.onnx_node "Clip"(%x, %lo, %hi) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {max = 2.000000e+00 : f64} : tensor<4xf32>
  %1 = hps.onnx_node "Clip"(%x, %n, %hi) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A bound computed at run time cannot be an attribute: stays generic.
// CHECK-LABEL: func @dynamic_bound
func.func @dynamic_bound(%x: tensor<4xf32>, %lo: tensor<f32>) -> tensor<4xf32> {
  // CHECK: hps.onnx_node "Clip"
  %0 = hps.onnx_node "Clip"(%x, %lo) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
