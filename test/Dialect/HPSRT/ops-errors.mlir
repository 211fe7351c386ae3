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
