// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// RMSNormalization (23): x / sqrt(mean(x^2 over the axes from `axis` on) +
// epsilon) * scale.
// CHECK-LABEL: func @rms_norm
func.func @rms_norm(%x: tensor<2x5x16xf32>, %s: tensor<16xf32>) -> tensor<2x5x16xf32> {
  // CHECK: %[[EPS:.*]] = hps.constant dense<1.000000e-03> : tensor<f32>
  // CHECK: %[[SQ:.*]] = hps.mul %arg0, %arg0
  // CHECK: %[[MEAN:.*]] = hps.reduce  mean %[[SQ]] {axes = array<i64: 2>, keepdims} : (tensor<2x5x16xf32>) -> tensor<2x5x1xf32>
  // CHECK: %[[SUM:.*]] = hps.add %[[MEAN]], %[[EPS]]
  // CHECK: %[[RMS:.*]] = hps.sqrt %[[SUM]]
  // CHECK: %[[N:.*]] = hps.div %arg0, %[[RMS]]
  // CHECK: hps.mul %[[N]], %arg1 : tensor<2x5x16xf32>, tensor<16xf32> -> tensor<2x5x16xf32>
  %0 = hps.onnx_node "RMSNormalization"(%x, %s) {attrs = {epsilon = 1.0e-3 : f32}, domain = "", opset = 23 : i64} : (tensor<2x5x16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  return %0 : tensor<2x5x16xf32>
}

// -----

// axis 1 of a 4-D X: the statistics over axes 1 to 3.
// CHECK-LABEL: func @rms_norm_axis1
func.func @rms_norm_axis1(%x: tensor<2x3x4x5xf32>, %s: tensor<4x5xf32>) -> tensor<2x3x4x5xf32> {
  // CHECK: hps.reduce  mean {{.*}} {axes = array<i64: 1, 2, 3>, keepdims} : (tensor<2x3x4x5xf32>) -> tensor<2x1x1x1xf32>
  %0 = hps.onnx_node "RMSNormalization"(%x, %s) {attrs = {axis = 1 : i64}, domain = "", opset = 23 : i64} : (tensor<2x3x4x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Stays generic: a scale that does not broadcast to X, a double stash.
// CHECK-LABEL: func @rms_norm_generic
func.func @rms_norm_generic(%x: tensor<2x5x16xf32>, %s: tensor<5xf32>, %t: tensor<16xf32>) -> (tensor<2x5x16xf32>, tensor<2x5x16xf32>) {
  // CHECK-COUNT-2: hps.onnx_node "RMSNormalization"
  %0 = hps.onnx_node "RMSNormalization"(%x, %s) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<2x5x16xf32>, tensor<5xf32>) -> tensor<2x5x16xf32>
  %1 = hps.onnx_node "RMSNormalization"(%x, %t) {attrs = {stash_type = 11 : i64}, domain = "", opset = 23 : i64} : (tensor<2x5x16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  return %0, %1 : tensor<2x5x16xf32>, tensor<2x5x16xf32>
}
