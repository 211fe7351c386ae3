// RUN: heterps-opt %s -canonicalize -split-input-file | FileCheck %s

// Shape arithmetic on constants folds away (what legalization relies on).
// CHECK-LABEL: func @shape_chain
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2xi64> {
  // CHECK: %[[C:.*]] = hps.constant dense<[2, 12]> : tensor<2xi64>
  // CHECK-NEXT: return %[[C]]
  %s = hps.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i0 = hps.constant dense<0> : tensor<i64>
  %d0 = hps.gather %s, %i0 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %u0 = hps.unsqueeze %d0 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %tail = hps.slice %s {starts = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: 0>, steps = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
  %one = hps.constant dense<1> : tensor<i64>
  %c2 = hps.constant dense<0> : tensor<1xi64>
  %t0 = hps.gather %tail, %c2 : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %c3 = hps.constant dense<1> : tensor<1xi64>
  %t1 = hps.gather %tail, %c3 : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %p = hps.mul %t0, %t1 : tensor<1xi64>
  %r = hps.concat %u0, %p {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// A dynamic extent stays symbolic.
// CHECK-LABEL: func @shape_dynamic
func.func @shape_dynamic(%x: tensor<?x3xf32>) -> tensor<2xi64> {
  // CHECK: hps.shape
  %s = hps.shape %x : (tensor<?x3xf32>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// CHECK-LABEL: func @arithmetic
func.func @arithmetic() -> (tensor<3xi64>, tensor<3xf32>, tensor<3xi1>, tensor<3xi64>) {
  %a = hps.constant dense<[7, -7, 8]> : tensor<3xi64>
  %b = hps.constant dense<[2, 2, -3]> : tensor<3xi64>
  // Integer Mod takes the divisor's sign: 7%2=1, -7%2=1, 8%-3=-1.
  // CHECK-DAG: hps.constant dense<[1, 1, -1]> : tensor<3xi64>
  %m = hps.mod %a, %b : tensor<3xi64>
  %f = hps.constant dense<[1.0, 4.0, 9.0]> : tensor<3xf32>
  %g = hps.constant dense<2.0> : tensor<f32>
  // CHECK-DAG: hps.constant dense<[5.000000e-01, 2.000000e+00, 4.500000e+00]> : tensor<3xf32>
  %d = hps.div %f, %g : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  // CHECK-DAG: hps.constant dense<[false, true, true]> : tensor<3xi1>
  %c = hps.greater %f, %g : tensor<3xf32>, tensor<f32> -> tensor<3xi1>
  // CHECK-DAG: hps.constant dense<[1, 4, 9]> : tensor<3xi64>
  %i = hps.cast %f : (tensor<3xf32>) -> tensor<3xi64>
  return %m, %d, %c, %i : tensor<3xi64>, tensor<3xf32>, tensor<3xi1>, tensor<3xi64>
}

// -----

// Neg and Abs fold (exported function bodies negate shape arithmetic).
// CHECK-LABEL: func @unary
func.func @unary() -> (tensor<3xi64>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>) {
  %a = hps.constant dense<[7, -7, 0]> : tensor<3xi64>
  %f = hps.constant dense<[1.5, -2.0]> : tensor<2xf32>
  // CHECK-DAG: hps.constant dense<[-7, 7, 0]> : tensor<3xi64>
  %n = hps.neg %a : tensor<3xi64>
  // CHECK-DAG: hps.constant dense<[7, 7, 0]> : tensor<3xi64>
  %b = hps.abs %a : tensor<3xi64>
  // CHECK-DAG: hps.constant dense<[-1.500000e+00, 2.000000e+00]> : tensor<2xf32>
  %nf = hps.neg %f : tensor<2xf32>
  // CHECK-DAG: hps.constant dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>
  %bf = hps.abs %f : tensor<2xf32>
  // CHECK-NOT: hps.neg
  // CHECK-NOT: hps.abs
  return %n, %b, %nf, %bf : tensor<3xi64>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Floor, Ceil and Round fold (MobileViT's export computes its patch grid as
// ceil(h / p) * p); Round is half to even.
// CHECK-LABEL: func @rounding
func.func @rounding() -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %f = hps.constant dense<[2.5, -2.5, 3.5, 0.49999997, -0.0]> : tensor<5xf32>
  // CHECK-DAG: hps.constant dense<[2.000000e+00, -3.000000e+00, 3.000000e+00, 0.000000e+00, -0.000000e+00]> : tensor<5xf32>
  %a = hps.floor %f : tensor<5xf32>
  // CHECK-DAG: hps.constant dense<[3.000000e+00, -2.000000e+00, 4.000000e+00, 1.000000e+00, -0.000000e+00]> : tensor<5xf32>
  %b = hps.ceil %f : tensor<5xf32>
  // CHECK-DAG: hps.constant dense<[2.000000e+00, -2.000000e+00, 4.000000e+00, 0.000000e+00, -0.000000e+00]> : tensor<5xf32>
  %c = hps.round %f : tensor<5xf32>
  // CHECK-NOT: hps.floor
  // CHECK-NOT: hps.ceil
  // CHECK-NOT: hps.round
  return %a, %b, %c : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}

// -----

// CHECK-LABEL: func @movement
func.func @movement() -> (tensor<3x2xi64>, tensor<2x2xi64>, tensor<2x3xi64>) {
  %a = hps.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  // CHECK-DAG: hps.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
  %t = hps.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xi64>) -> tensor<3x2xi64>
  // CHECK-DAG: hps.constant dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>
  %s = hps.slice %a {starts = array<i64: -1>, ends = array<i64: -9223372036854775807>, axes = array<i64: 1>, steps = array<i64: -2>} : (tensor<2x3xi64>) -> tensor<2x2xi64>
  %c = hps.constant dense<true> : tensor<2x1xi1>
  %z = hps.constant dense<0> : tensor<i64>
  // CHECK-DAG: hps.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %w = hps.where %c, %a, %z : (tensor<2x1xi1>, tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
  return %t, %s, %w : tensor<3x2xi64>, tensor<2x2xi64>, tensor<2x3xi64>
}

// -----

// Weights never fold or merge: equal values are still two parameters.
// CHECK-LABEL: func @weights
func.func @weights() -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK: hps.weight "a"
  // CHECK: hps.weight "b"
  %a = hps.weight "a" dense<1.0> : tensor<2xf32>
  %b = hps.weight "b" dense<1.0> : tensor<2xf32>
  %c = hps.reshape %a {shape = array<i64: 2>} : (tensor<2xf32>) -> tensor<2xf32>
  return %c, %b : tensor<2xf32>, tensor<2xf32>
}

// -----

// Identity reshapes and transposes disappear.
// CHECK-LABEL: func @identities
func.func @identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: return %arg0
  %0 = hps.reshape %x {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = hps.transpose %0 {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// A quantized value dequantized next: f32 -> u8 -> f32 of rounded, clipped
// integers within u8's range is the clipped value itself.
// CHECK-LABEL: func @quantize_round_trip
func.func @quantize_round_trip(%x: tensor<4xf32>, %z: tensor<ui8>) -> tensor<4xf32> {
  // CHECK: %[[Z:.*]] = hps.cast %arg1
  // CHECK: %[[R:.*]] = hps.round %arg0
  // CHECK: %[[A:.*]] = hps.add %[[R]], %[[Z]]
  // CHECK: %[[C:.*]] = hps.clip %[[A]]
  // CHECK-NEXT: return %[[C]]
  %zf = hps.cast %z : (tensor<ui8>) -> tensor<f32>
  %r = hps.round %x : tensor<4xf32>
  %a = hps.add %r, %zf : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %c = hps.clip %a {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %q = hps.cast %c : (tensor<4xf32>) -> tensor<4xui8>
  %d = hps.cast %q : (tensor<4xui8>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// A float zero point that is a whole number keeps the value integral (the
// zero point of QuantizeLinear folded to a constant); a fractional one or
// a weight that training updates does not.
// CHECK-LABEL: func @quantize_round_trip_constant_zero_point
func.func @quantize_round_trip_constant_zero_point(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[C:.*]] = hps.clip
  // CHECK-NOT: hps.cast %[[C]]
  // CHECK-COUNT-4: hps.cast
  // CHECK: return %[[C]],
  %zp = hps.constant dense<1.280000e+02> : tensor<f32>
  %half = hps.constant dense<5.000000e-01> : tensor<f32>
  %trained = hps.weight "zp" {hps.trainable} dense<3.000000e+00> : tensor<f32>
  %r = hps.round %x : tensor<4xf32>
  %a = hps.add %r, %zp : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %c = hps.clip %a {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %q = hps.cast %c : (tensor<4xf32>) -> tensor<4xui8>
  %d = hps.cast %q : (tensor<4xui8>) -> tensor<4xf32>
  %a2 = hps.add %r, %half : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %c2 = hps.clip %a2 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %q2 = hps.cast %c2 : (tensor<4xf32>) -> tensor<4xui8>
  %d2 = hps.cast %q2 : (tensor<4xui8>) -> tensor<4xf32>
  %a3 = hps.add %r, %trained : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %c3 = hps.clip %a3 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %q3 = hps.cast %c3 : (tensor<4xf32>) -> tensor<4xui8>
  %d3 = hps.cast %q3 : (tensor<4xui8>) -> tensor<4xf32>
  return %d, %d2, %d3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Not when the clip reaches past the integer type, or the value may hold
// fractions (no rounding before).
// CHECK-LABEL: func @quantize_round_trip_kept
func.func @quantize_round_trip_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-COUNT-4: hps.cast
  %r = hps.round %x : tensor<4xf32>
  %wide = hps.clip %r {max = 2.560000e+02 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %q1 = hps.cast %wide : (tensor<4xf32>) -> tensor<4xui8>
  %d1 = hps.cast %q1 : (tensor<4xui8>) -> tensor<4xf32>
  %frac = hps.clip %x {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64} : tensor<4xf32>
  %q2 = hps.cast %frac : (tensor<4xf32>) -> tensor<4xi8>
  %d2 = hps.cast %q2 : (tensor<4xi8>) -> tensor<4xf32>
  return %d1, %d2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Reductions fold where the result does not depend on the order of the
// runtime's arithmetic: integer sum, product, max, min (a flatten export's
// ReduceProd of extents), float max and min.
// CHECK-LABEL: func @reduce_exact
func.func @reduce_exact() -> (tensor<1xi64>, tensor<2xi32>, tensor<3xi64>, tensor<2x1xf32>, tensor<ui8>) {
  %extents = hps.constant dense<[3, 4]> : tensor<2xi64>
  %m = hps.constant dense<[[1, -7, 3], [4, 5, -6]]> : tensor<2x3xi32>
  %f = hps.constant dense<[[1.5, -2.0], [-0.5, -3.0]]> : tensor<2x2xf32>
  %u = hps.constant dense<[200, 7]> : tensor<2xui8>
  // CHECK-DAG: hps.constant dense<12> : tensor<1xi64>
  // CHECK-DAG: hps.constant dense<[-7, -6]> : tensor<2xi32>
  // CHECK-DAG: hps.constant dense<[4, 5, 3]> : tensor<3xi64>
  // CHECK-DAG: hps.constant dense<{{\[}}[1.500000e+00], [-5.000000e-01]]> : tensor<2x1xf32>
  // CHECK-DAG: hps.constant dense<200> : tensor<ui8>
  // CHECK-NOT: hps.reduce
  %0 = hps.reduce prod %extents {axes = array<i64>, keepdims} : (tensor<2xi64>) -> tensor<1xi64>
  %1 = hps.reduce min %m {axes = array<i64: -1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  %2 = hps.reduce max %m {axes = array<i64: 0>} : (tensor<2x3xi32>) -> tensor<3xi32>
  %3 = hps.cast %2 : (tensor<3xi32>) -> tensor<3xi64>
  %4 = hps.reduce max %f {axes = array<i64: 1>, keepdims} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %5 = hps.reduce max %u {axes = array<i64>} : (tensor<2xui8>) -> tensor<ui8>
  return %0, %1, %3, %4, %5 : tensor<1xi64>, tensor<2xi32>, tensor<3xi64>, tensor<2x1xf32>, tensor<ui8>
}

// -----

// A float sum depends on the order of additions, so it stays.
// CHECK-LABEL: func @reduce_float_sum
func.func @reduce_float_sum() -> tensor<f32> {
  // CHECK: hps.reduce sum
  %f = hps.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %0 = hps.reduce sum %f {axes = array<i64>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
