// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-10 (Clip 6): min/max attributes, defaulting to the float range.
// CHECK-LABEL: func @attrs
func.func @attrs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.clip %arg0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %0 = hps.onnx_node "Clip"(%x) {attrs = {min = 0.0 : f32, max = 6.0 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {max = 3.4028234663852886E+38 : f64, min = -1.000000e+00 : f64} : tensor<4xf32>
  %1 = hps.onnx_node "Clip"(%x) {attrs = {min = -1.0 : f32}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {max = 3.4028234663852886E+38 : f64, min = -3.4028234663852886E+38 : f64} : tensor<4xf32>
  %2 = hps.onnx_node "Clip"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Opset 11+: optional constant inputs (hps.constant or a weight); an
// omitted bound is open.
// CHECK-LABEL: func @inputs
func.func @inputs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %n = hps.none
  %lo = hps.constant dense<-2.0> : tensor<f32>
  %hi = hps.constant dense<2.0> : tensor<f32>
  %w = hps.weight "clip.max" dense<[4.0]> : tensor<1xf32>
  // CHECK: hps.clip %arg0 {max = 2.000000e+00 : f64, min = -2.000000e+00 : f64} : tensor<4xf32>
  %0 = hps.onnx_node "Clip"(%x, %lo, %hi) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {max = 2.000000e+00 : f64} : tensor<4xf32>
  %1 = hps.onnx_node "Clip"(%x, %n, %hi) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {min = -2.000000e+00 : f64} : tensor<4xf32>
  %2 = hps.onnx_node "Clip"(%x, %lo) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 : tensor<4xf32>
  %3 = hps.onnx_node "Clip"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.clip %arg0 {max = 4.000000e+00 : f64, min = -2.000000e+00 : f64} : tensor<4xf32>
  %4 = hps.onnx_node "Clip"(%x, %lo, %w) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<1xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Opset 12+ clips integers too.
// CHECK-LABEL: func @integer
func.func @integer(%x: tensor<4xi64>) -> tensor<4xi64> {
  %lo = hps.constant dense<0> : tensor<i64>
  %hi = hps.constant dense<255> : tensor<i64>
  // CHECK: hps.clip %arg0 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<4xi64>
  %0 = hps.onnx_node "Clip"(%x, %lo, %hi) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xi64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Bounds known only at run time become max and min against the scalar
// bound.
// CHECK-LABEL: func @runtime
func.func @runtime(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = hps.none
  // CHECK: %[[LO:.*]] = hps.max %arg0, %arg1 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  // CHECK: %[[BOTH:.*]] = hps.min %[[LO]], %arg2 : tensor<4xf32>, tensor<1xf32> -> tensor<4xf32>
  %0 = hps.onnx_node "Clip"(%x, %lo, %hi) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<1xf32>) -> tensor<4xf32>
  // CHECK: %[[HI:.*]] = hps.min %arg0, %arg2
  %1 = hps.onnx_node "Clip"(%x, %n, %hi) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<4xf32>, none, tensor<1xf32>) -> tensor<4xf32>
  // CHECK: return %[[BOTH]], %[[HI]]
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Stay generic: a bound of several elements, and an integer bound beyond
// 2^53 (an f64 attribute cannot hold it, and its type differs from x's).
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %n = hps.none
  %two = hps.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %big = hps.constant dense<1152921504606846977> : tensor<i64>
  // CHECK: hps.onnx_node "Clip"(%arg0, %{{.*}}, %{{.*}})
  %0 = hps.onnx_node "Clip"(%x, %n, %two) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, none, tensor<2xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Clip"(%arg1, %{{.*}}, %{{.*}})
  %1 = hps.onnx_node "Clip"(%i, %n, %big) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xi32>, none, tensor<i64>) -> tensor<4xi32>
  // CHECK-NOT: hps.clip
  // CHECK-NOT: hps.max
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}
