// RUN: heterps-opt %s | heterps-opt | FileCheck %s

// hpsrt ops are ordinary IR: they parse, verify and print back, struct
// parameters as attributes with the runtime structs' fields.

// CHECK-LABEL: func.func @calls
// CHECK: "hpsrt.gemm"(%{{.*}}, %{{.*}}) <{act = #hpsrt.activation<kind = <Relu>, params = <alpha = 0.000000e+00 : f32, beta = 0.000000e+00 : f32, lo = 0xFFF0000000000000 : f64, hi = 0x7FF0000000000000 : f64>>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, constantB = true, k = 16 : i64, m = 8 : i64, n = 4 : i64, transA = false, transB = false, type = f32}>
// CHECK: "hpsrt.unary"(%{{.*}}) <{kind = #hpsrt.unary_kind<Clip>, n = 32 : i64, params = #hpsrt.unary_params<alpha = 0.000000e+00 : f32, beta = 0.000000e+00 : f32, lo = -1.000000e+00 : f64, hi = 6.000000e+00 : f64>, type = f32}>
// CHECK: "hpsrt.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64, inputs = [array<i64: 2, 3>, array<i64: 2, 5>], type = f32}>
// CHECK: "hpsrt.conv"(%{{.*}}, %{{.*}}, %{{.*}}) <{{{.*}}options = #hpsrt.conv_options<x = <Native>, y = <Native>, residual = true, exact = false>{{.*}}}>
func.func @calls(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %x: tensor<32xf32>, %p: tensor<2x3xf32>, %q: tensor<2x5xf32>, %img: tensor<1x16x4x4xf32>, %w: tensor<16x16x1x1xf32>) -> (tensor<8x4xf32>, tensor<32xf32>, tensor<2x8xf32>, tensor<1x16x4x4xf32>) {
  %y = "hpsrt.gemm"(%a, %b) <{type = f32, m = 8 : i64, n = 4 : i64, k = 16 : i64, transA = false, transB = false, alpha = 1.0 : f32, beta = 1.0 : f32, act = #hpsrt.activation<kind = <Relu>, params = <alpha = 0.0 : f32, beta = 0.0 : f32, lo = 0xFFF0000000000000 : f64, hi = 0x7FF0000000000000 : f64>>, constantB = true}> : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %u = "hpsrt.unary"(%x) <{type = f32, kind = #hpsrt.unary_kind<Clip>, params = #hpsrt.unary_params<alpha = 0.0 : f32, beta = 0.0 : f32, lo = -1.0 : f64, hi = 6.0 : f64>, n = 32 : i64}> : (tensor<32xf32>) -> tensor<32xf32>
  %c = "hpsrt.concat"(%p, %q) <{type = f32, inputs = [array<i64: 2, 3>, array<i64: 2, 5>], axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %v = "hpsrt.conv"(%img, %w, %img) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>, type = f32, x = array<i64: 1, 16, 4, 4>, w = array<i64: 16, 16, 1, 1>, hasBias = false, y = array<i64: 1, 16, 4, 4>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padBegin = array<i64: 0, 0>, padEnd = array<i64: 0, 0>, group = 1 : i64, act = #hpsrt.activation<kind = <Identity>, params = <alpha = 0.0 : f32, beta = 0.0 : f32, lo = 0xFFF0000000000000 : f64, hi = 0x7FF0000000000000 : f64>>, constantWeights = true, options = #hpsrt.conv_options<x = <Native>, y = <Native>, residual = true, exact = false>}> : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %y, %u, %c, %v : tensor<8x4xf32>, tensor<32xf32>, tensor<2x8xf32>, tensor<1x16x4x4xf32>
}
