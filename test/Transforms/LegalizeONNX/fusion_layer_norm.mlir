// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// LayerNorm as PyTorch exports it before opset 17: ReduceMean, Sub, Pow 2,
// ReduceMean, Add eps, Sqrt, Div, Mul scale, Add bias.
// CHECK-LABEL: func @pytorch
func.func @pytorch(%x: tensor<?x5x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x5x8xf32> {
  %two = hps.constant dense<2.0> : tensor<f32>
  %eps = hps.constant dense<1.0e-3> : tensor<f32>
  %m = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: -1>}, domain = "", opset = 10 : i64} : (tensor<?x5x8xf32>) -> tensor<?x5x1xf32>
  %d = hps.onnx_node "Sub"(%x, %m) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x5x8xf32>, tensor<?x5x1xf32>) -> tensor<?x5x8xf32>
  %p = hps.onnx_node "Pow"(%d, %two) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x5x8xf32>, tensor<f32>) -> tensor<?x5x8xf32>
  %v = hps.onnx_node "ReduceMean"(%p) {attrs = {axes = array<i64: -1>}, domain = "", opset = 10 : i64} : (tensor<?x5x8xf32>) -> tensor<?x5x1xf32>
  %ve = hps.onnx_node "Add"(%v, %eps) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x5x1xf32>, tensor<f32>) -> tensor<?x5x1xf32>
  %s = hps.onnx_node "Sqrt"(%ve) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x5x1xf32>) -> tensor<?x5x1xf32>
  %n = hps.onnx_node "Div"(%d, %s) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x5x8xf32>, tensor<?x5x1xf32>) -> tensor<?x5x8xf32>
  %y = hps.onnx_node "Mul"(%n, %g) {attrs = {}, domain = "", opset = 10 : i64, device = #hps.device<"gpu.0">} : (tensor<?x5x8xf32>, tensor<8xf32>) -> tensor<?x5x8xf32>
  %z = hps.onnx_node "Add"(%y, %b) {attrs = {}, domain = "", opset = 10 : i64, device = #hps.device<"gpu.0">} : (tensor<?x5x8xf32>, tensor<8xf32>) -> tensor<?x5x8xf32>
  // CHECK-NEXT: %[[LN:.*]] = hps.layer_norm %arg0, %arg1, %arg2 {device = #hps.device<"gpu.0">, epsilon = 1.000000e-03 : f32} : (tensor<?x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x5x8xf32>
  // CHECK-NEXT: return %[[LN]]
  return %z : tensor<?x5x8xf32>
}

// -----

// Two trailing axes, x*x for the square, scale and bias on the left, no
// device.
// CHECK-LABEL: func @variants
func.func @variants(%x: tensor<2x5x8xf32>, %g: tensor<5x8xf32>, %b: tensor<1x8xf32>) -> tensor<2x5x8xf32> {
  %eps = hps.constant dense<1.0e-5> : tensor<1xf32>
  %m = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 2, 1>}, domain = "", opset = 13 : i64} : (tensor<2x5x8xf32>) -> tensor<2x1x1xf32>
  %d = hps.onnx_node "Sub"(%x, %m) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x5x8xf32>, tensor<2x1x1xf32>) -> tensor<2x5x8xf32>
  %p = hps.onnx_node "Mul"(%d, %d) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v = hps.onnx_node "ReduceMean"(%p) {attrs = {axes = array<i64: -2, -1>}, domain = "", opset = 13 : i64} : (tensor<2x5x8xf32>) -> tensor<2x1x1xf32>
  %ve = hps.onnx_node "Add"(%eps, %v) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %s = hps.onnx_node "Sqrt"(%ve) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %n = hps.onnx_node "Div"(%d, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x5x8xf32>, tensor<2x1x1xf32>) -> tensor<2x5x8xf32>
  %y = hps.onnx_node "Mul"(%g, %n) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %z = hps.onnx_node "Add"(%b, %y) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  // CHECK-NEXT: %[[LN:.*]] = hps.layer_norm %arg0, %arg1, %arg2 {axis = -2 : i64} : (tensor<2x5x8xf32>, tensor<5x8xf32>, tensor<1x8xf32>) -> tensor<2x5x8xf32>
  // CHECK-NEXT: return %[[LN]]
  return %z : tensor<2x5x8xf32>
}

// -----

// Without the bias Add the layer norm has no bias.
// CHECK-LABEL: func @no_bias
func.func @no_bias(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = hps.constant dense<2.0> : tensor<f32>
  %eps = hps.constant dense<1.0e-5> : tensor<f32>
  %m = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = hps.onnx_node "Sub"(%x, %m) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %p = hps.onnx_node "Pow"(%d, %two) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v = hps.onnx_node "ReduceMean"(%p) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = hps.onnx_node "Add"(%v, %eps) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = hps.onnx_node "Sqrt"(%ve) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = hps.onnx_node "Div"(%d, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = hps.onnx_node "Mul"(%n, %g) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[LN:.*]] = hps.layer_norm %arg0, %arg1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: return %[[LN]]
  return %y : tensor<4x8xf32>
}

// -----

// Near misses stay decomposed: a cube for the square, a mean over a
// non-trailing axis, a per-row scale (it varies along an axis that is not
// normalized), a mean without keepdims.
// CHECK-LABEL: func @near_misses
func.func @near_misses(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %rows: tensor<4x1xf32>, %sq: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) {
  %two = hps.constant dense<2.0> : tensor<f32>
  %three = hps.constant dense<3.0> : tensor<f32>
  %eps = hps.constant dense<1.0e-5> : tensor<f32>
  %m = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = hps.onnx_node "Sub"(%x, %m) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %c = hps.onnx_node "Pow"(%d, %three) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %vc = hps.onnx_node "ReduceMean"(%c) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %vce = hps.onnx_node "Add"(%vc, %eps) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %sc = hps.onnx_node "Sqrt"(%vce) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %nc = hps.onnx_node "Div"(%d, %sc) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %0 = hps.onnx_node "Mul"(%nc, %g) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>

  %m0 = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 0>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d0 = hps.onnx_node "Sub"(%x, %m0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %p0 = hps.onnx_node "Pow"(%d0, %two) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v0 = hps.onnx_node "ReduceMean"(%p0) {attrs = {axes = array<i64: 0>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %ve0 = hps.onnx_node "Add"(%v0, %eps) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s0 = hps.onnx_node "Sqrt"(%ve0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %n0 = hps.onnx_node "Div"(%d0, %s0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %1 = hps.onnx_node "Mul"(%n0, %g) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>

  %p = hps.onnx_node "Pow"(%d, %two) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %v = hps.onnx_node "ReduceMean"(%p) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ve = hps.onnx_node "Add"(%v, %eps) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = hps.onnx_node "Sqrt"(%ve) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = hps.onnx_node "Div"(%d, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = hps.onnx_node "Mul"(%n, %rows) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>

  %mk = hps.onnx_node "ReduceMean"(%sq) {attrs = {axes = array<i64: 1>, keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<8x8xf32>) -> tensor<8xf32>
  %dk = hps.onnx_node "Sub"(%sq, %mk) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  %pk = hps.onnx_node "Pow"(%dk, %two) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %vk = hps.onnx_node "ReduceMean"(%pk) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %vek = hps.onnx_node "Add"(%vk, %eps) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
  %sk = hps.onnx_node "Sqrt"(%vek) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %nk = hps.onnx_node "Div"(%dk, %sk) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %3 = hps.onnx_node "Mul"(%nk, %g) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  // CHECK-NOT: hps.layer_norm
  // CHECK: return
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>
}
