// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// The tanh-approximated GELU as PyTorch exports it:
// x*0.5 * (1 + tanh(0.7978845608 * (x + x*0.044715*x*x))).
// CHECK-LABEL: func @tanh_pytorch
func.func @tanh_pytorch(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %half = hps.constant dense<0.5> : tensor<f32>
  %one = hps.constant dense<1.0> : tensor<f32>
  %k = hps.constant dense<0.044715> : tensor<f32>
  %c = hps.constant dense<0.797884583> : tensor<f32>
  %h = hps.onnx_node "Mul"(%x, %half) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %a = hps.onnx_node "Mul"(%x, %k) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %b = hps.onnx_node "Mul"(%a, %x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %cube = hps.onnx_node "Mul"(%b, %x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %s = hps.onnx_node "Add"(%x, %cube) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %u = hps.onnx_node "Mul"(%s, %c) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %t = hps.onnx_node "Tanh"(%u) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %t1 = hps.onnx_node "Add"(%t, %one) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
  %y = hps.onnx_node "Mul"(%h, %t1) {attrs = {}, domain = "", opset = 10 : i64, device = #hps.device<"gpu.0">} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  // CHECK-NEXT: %[[G:.*]] = hps.gelu %arg0 {device = #hps.device<"gpu.0">, tanh_approximation} : tensor<?x16xf32>
  // CHECK-NEXT: return %[[G]]
  return %y : tensor<?x16xf32>
}

// -----

// Other spellings: 0.5 * x * (...), Pow(x, 3), the constant on the left,
// x itself a product.
// CHECK-LABEL: func @tanh_variants
func.func @tanh_variants(%p: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xf32> {
  %half = hps.constant dense<0.5> : tensor<1xf32>
  %one = hps.constant dense<1.0> : tensor<f32>
  %three = hps.constant dense<3.0> : tensor<f32>
  %k = hps.constant dense<0.044715> : tensor<f32>
  %c = hps.constant dense<0.7978845608> : tensor<f32>
  // CHECK-NEXT: %[[X:.*]] = hps.mul %arg0, %arg1 : tensor<4xf32>
  %x = hps.onnx_node "Mul"(%p, %q) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h = hps.onnx_node "Mul"(%half, %x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x3 = hps.onnx_node "Pow"(%x, %three) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %cube = hps.onnx_node "Mul"(%k, %x3) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %s = hps.onnx_node "Add"(%cube, %x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = hps.onnx_node "Mul"(%c, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %t = hps.onnx_node "Tanh"(%u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %t1 = hps.onnx_node "Add"(%one, %t) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y = hps.onnx_node "Mul"(%t1, %h) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[G:.*]] = hps.gelu %[[X]] {tanh_approximation} : tensor<4xf32>
  // CHECK-NEXT: return %[[G]]
  return %y : tensor<4xf32>
}

// -----

// The exact GELU, 0.5 * x * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func @erf
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = hps.constant dense<0.5> : tensor<f32>
  %one = hps.constant dense<1.0> : tensor<f32>
  %r2 = hps.constant dense<1.41421354> : tensor<f32>
  %u = hps.onnx_node "Div"(%x, %r2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = hps.onnx_node "Erf"(%u) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %e1 = hps.onnx_node "Add"(%e, %one) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = hps.onnx_node "Mul"(%x, %e1) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = hps.onnx_node "Mul"(%m, %half) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[G:.*]] = hps.gelu %arg0 : tensor<4xf32>
  // CHECK-NEXT: return %[[G]]
  return %y : tensor<4xf32>
}

// -----

// Near misses stay decomposed: 0.04 for 0.044715, sqrt(2/pi) off by 1e-4,
// the cube of another value, a constant that broadcasts x to a larger
// shape.
// CHECK-LABEL: func @near_misses
func.func @near_misses(%x: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>) {
  %half = hps.constant dense<0.5> : tensor<f32>
  %halves = hps.constant dense<0.5> : tensor<2x1xf32>
  %one = hps.constant dense<1.0> : tensor<f32>
  %three = hps.constant dense<3.0> : tensor<f32>
  %k = hps.constant dense<0.044715> : tensor<f32>
  %kbad = hps.constant dense<0.04> : tensor<f32>
  %c = hps.constant dense<0.797884583> : tensor<f32>
  %cbad = hps.constant dense<0.7979845608> : tensor<f32>
  %h = hps.onnx_node "Mul"(%x, %half) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %x3 = hps.onnx_node "Pow"(%x, %three) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %z3 = hps.onnx_node "Pow"(%z, %three) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>

  %cube0 = hps.onnx_node "Mul"(%x3, %kbad) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s0 = hps.onnx_node "Add"(%x, %cube0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u0 = hps.onnx_node "Mul"(%s0, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t0 = hps.onnx_node "Tanh"(%u0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %p0 = hps.onnx_node "Add"(%t0, %one) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %0 = hps.onnx_node "Mul"(%h, %p0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

  %cube = hps.onnx_node "Mul"(%x3, %k) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s1 = hps.onnx_node "Add"(%x, %cube) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u1 = hps.onnx_node "Mul"(%s1, %cbad) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t1 = hps.onnx_node "Tanh"(%u1) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %p1 = hps.onnx_node "Add"(%t1, %one) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = hps.onnx_node "Mul"(%h, %p1) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

  %zc = hps.onnx_node "Mul"(%z3, %k) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %s2 = hps.onnx_node "Add"(%x, %zc) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u2 = hps.onnx_node "Mul"(%s2, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t2 = hps.onnx_node "Tanh"(%u2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %p2 = hps.onnx_node "Add"(%t2, %one) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = hps.onnx_node "Mul"(%h, %p2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

  %s3 = hps.onnx_node "Add"(%x, %cube) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u3 = hps.onnx_node "Mul"(%s3, %c) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t3 = hps.onnx_node "Tanh"(%u3) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %p3 = hps.onnx_node "Add"(%t3, %one) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hb = hps.onnx_node "Mul"(%x, %halves) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %3 = hps.onnx_node "Mul"(%hb, %p3) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK-NOT: hps.gelu
  // CHECK: return
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>
}
