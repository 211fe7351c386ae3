// RUN: heterps-opt %s -split-input-file -verify-diagnostics

// Parameters are checked as the IR is read: a missing one, or an enum case
// the runtime does not have.


func.func @missing_parameter(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{requires attribute 'n'}}
  %u = "hpsrt.unary"(%x) <{type = f32, kind = #hpsrt.unary_kind<Relu>, params = #hpsrt.unary_params<alpha = 0.0 : f32, beta = 0.0 : f32, lo = -1.0 : f64, hi = 6.0 : f64>}> : (tensor<32xf32>) -> tensor<32xf32>
  return %u : tensor<32xf32>
}

// -----

func.func @unknown_kind(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+2 {{expected ::heterps::hpsrt::UnaryKind to be one of}}
  // expected-error @+1 {{failed to parse HPSRT_UnaryKindAttr parameter 'value'}}
  %u = "hpsrt.unary"(%x) <{type = f32, kind = #hpsrt.unary_kind<Swish>, params = #hpsrt.unary_params<alpha = 0.0 : f32, beta = 0.0 : f32, lo = -1.0 : f64, hi = 6.0 : f64>, n = 32 : i64}> : (tensor<32xf32>) -> tensor<32xf32>
  return %u : tensor<32xf32>
}

// -----

// A kernel is built for the shapes its attributes name; the buffers it runs
// on must have them (the generated verifiers: shape attribute N against the
// operand or result NData).
func.func @shape_attribute_mismatch(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'hpsrt.binary' op 'b' is [4, 3] but its buffer is 'tensor<3xf32>'}}
  %y = "hpsrt.binary"(%a, %b) <{a = array<i64: 4, 3>, b = array<i64: 4, 3>, in = f32, kind = #hpsrt.binary_kind<Add>, y = array<i64: 4, 3>}> : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @result_shape_mismatch(%x: tensor<1x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'hpsrt.expand' op 'y' is [2, 3] but its buffer is 'tensor<4x3xf32>'}}
  %y = "hpsrt.expand"(%x) <{type = f32, x = array<i64: 1, 3>, y = array<i64: 2, 3>}> : (tensor<1x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// A kernel whose runtime class runs some element types only (the op's
// `elementTypes`) is refused with any other here, at compile time: before
// 2026-12-03 the bundle was written and every run failed building it.
func.func @element_type_the_kernel_does_not_run(%a: tensor<8x16xf16>, %b: tensor<16x4xf16>) -> tensor<8x4xf16> {
  // expected-error @+1 {{'hpsrt.gemm' op the runtime's Gemm kernel runs f32, not f16}}
  %y = "hpsrt.gemm"(%a, %b) <{type = f16, m = 8 : i64, n = 4 : i64, k = 16 : i64, transA = false, transB = false, alpha = 1.0 : f32, beta = 1.0 : f32, act = #hpsrt.activation<kind = <Relu>, params = <alpha = 0.0 : f32, beta = 0.0 : f32, lo = 0xFFF0000000000000 : f64, hi = 0x7FF0000000000000 : f64>>, constantB = true}> : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  return %y : tensor<8x4xf16>
}

// -----

func.func @reduction_of_bytes(%x: tensor<2x3xi8>) -> tensor<2xi8> {
  // expected-error @+1 {{'hpsrt.reduce' op the runtime's Reduce kernel runs f32, f64, i32, i64, not i8}}
  %y = "hpsrt.reduce"(%x) <{type = i8, kind = #hpsrt.reduce_kind<Max>, x = array<i64: 2, 3>, axes = array<i64: 1>, y = array<i64: 2>}> : (tensor<2x3xi8>) -> tensor<2xi8>
  return %y : tensor<2xi8>
}
