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
