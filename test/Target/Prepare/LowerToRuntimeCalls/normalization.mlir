// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Normalizations become hpsrt.batch_norm, hpsrt.layer_norm and
// hpsrt.softmax (log = true for hps.log_softmax), with negative axes
// normalized and the ONNX defaults filled in (layer norm's axis -1 and
// epsilon 1e-5, softmax's axis -1); layer norm's scale shape is given as
// stored, and hasBias says whether there is a bias.

// CHECK-LABEL: func.func @stage_0
func.func @stage_0(%x: tensor<2x3x5x6xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %a: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %g1: tensor<4xf32>, %b1: tensor<4xf32>) -> (tensor<2x3x5x6xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // x, scale, bias, mean, variance.
  // CHECK-NEXT: %[[BN:.*]] = "hpsrt.batch_norm"(%arg0, %arg1, %arg2, %arg3, %arg4) <{epsilon = 1.000000e-03 : f32, type = f32, x = array<i64: 2, 3, 5, 6>}> : (tensor<2x3x5x6xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5x6xf32>
  %bn = hps.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32} : (tensor<2x3x5x6xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5x6xf32>
  // Axis -2 of rank 3 is 1; no bias; the default epsilon.
  // CHECK-NEXT: %[[LN:.*]] = "hpsrt.layer_norm"(%arg5, %arg6) <{axis = 1 : i64, epsilon = 9.99999974E-6 : f32, hasBias = false, scaleShape = array<i64: 3, 4>, type = f32, x = array<i64: 2, 3, 4>}> : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %ln = hps.layer_norm %a, %g {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  // The default axis -1 is 2; a bias.
  // CHECK-NEXT: %[[LN2:.*]] = "hpsrt.layer_norm"(%arg5, %arg7, %arg8) <{axis = 2 : i64, epsilon = 0.00999999977 : f32, hasBias = true, scaleShape = array<i64: 4>, type = f32, x = array<i64: 2, 3, 4>}> : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %ln2 = hps.layer_norm %a, %g1, %b1 {epsilon = 1.0e-2 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // The default axis -1 is 2.
  // CHECK-NEXT: %[[SM:.*]] = "hpsrt.softmax"(%arg5) <{axis = 2 : i64, log = false, type = f32, x = array<i64: 2, 3, 4>}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %sm = hps.softmax %a : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %[[LS:.*]] = "hpsrt.softmax"(%arg5) <{axis = 1 : i64, log = true, type = f32, x = array<i64: 2, 3, 4>}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %ls = hps.log_softmax %a {axis = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: return %[[BN]], %[[LN]], %[[LN2]], %[[SM]], %[[LS]]
  return %bn, %ln, %ln2, %sm, %ls : tensor<2x3x5x6xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
