// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// DFT (17): one hps.matmul of [rows, samples x channels] by a constant
// [samples x channels, bins x 2] matrix of cosines and sines; a signal axis
// other than the last but one is moved there and back.
// CHECK-LABEL: func @dft
func.func @dft(%x: tensor<2x4x3x1xf32>, %c: tensor<2x5x2xf32>, %n: tensor<i64>) -> (tensor<2x4x3x2xf32>, tensor<2x4x2x2xf32>, tensor<2x3x2xf32>, tensor<2x5x2xf32>, tensor<2x?x2xf32>) {
  // Real 4-point DFT along axis 1: rows t, columns (k, re/im); cos and sin
  // of quarter turns are exact.
  // CHECK-DAG: %[[W4:.*]] = hps.constant dense<{{\[\[}}1.000000e+00, -0.000000e+00, 1.000000e+00, -0.000000e+00, 1.000000e+00, -0.000000e+00, 1.000000e+00, -0.000000e+00], [1.000000e+00, -0.000000e+00, 0.000000e+00, -1.000000e+00, -1.000000e+00, -0.000000e+00, 0.000000e+00, 1.000000e+00], {{.*}}]> : tensor<4x8xf32>
  // CHECK: %[[T:.*]] = hps.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
  // CHECK: %[[R:.*]] = hps.reshape %[[T]] {shape = array<i64: 6, 4>}
  // CHECK: %[[M:.*]] = hps.matmul %[[R]], %[[W4]] : (tensor<6x4xf32>, tensor<4x8xf32>) -> tensor<6x8xf32>
  // CHECK: %[[B:.*]] = hps.reshape %[[M]] {shape = array<i64: 2, 3, 4, 2>}
  // CHECK: %[[Y0:.*]] = hps.transpose %[[B]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x2xf32>) -> tensor<2x4x3x2xf32>
  %0 = hps.onnx_node "DFT"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x4x3x1xf32>) -> tensor<2x4x3x2xf32>
  // One-sided along axis -2 (already last but one): 3 / 2 + 1 = 2 bins.
  // CHECK: %[[R1:.*]] = hps.reshape %arg0 {shape = array<i64: 8, 3>}
  // CHECK: %[[M1:.*]] = hps.matmul %[[R1]], %{{.*}} : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  // CHECK: %[[Y1:.*]] = hps.reshape %[[M1]] {shape = array<i64: 2, 4, 2, 2>}
  %1 = hps.onnx_node "DFT"(%x) {attrs = {axis = -2 : i64, onesided = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x4x3x1xf32>) -> tensor<2x4x2x2xf32>
  // A complex signal truncated to dft_length 3: the first 3 samples (6
  // values) of each row; rows (t, re/im) of the matrix.
  // CHECK: %[[R2:.*]] = hps.reshape %arg1 {shape = array<i64: 2, 10>}
  // CHECK: %[[S2:.*]] = hps.slice %[[R2]] {axes = array<i64: 1>, ends = array<i64: 6>, starts = array<i64: 0>, steps = array<i64: 1>}
  // CHECK: %[[M2:.*]] = hps.matmul %[[S2]], %{{.*}} : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
  // CHECK: %[[Y2:.*]] = hps.reshape %[[M2]] {shape = array<i64: 2, 3, 2>}
  %three = hps.constant dense<3> : tensor<i64>
  %2 = hps.onnx_node "DFT"(%c, %three) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x5x2xf32>, tensor<i64>) -> tensor<2x3x2xf32>
  // One-sided output of an inverse or complex transform is not defined, and
  // a run-time dft_length has no static shape: both stay generic.
  // CHECK: %[[Y3:.*]] = hps.onnx_node "DFT"(%arg1) {attrs = {inverse = 1 : i64, onesided = 1 : i64}
  %3 = hps.onnx_node "DFT"(%c) {attrs = {inverse = 1 : i64, onesided = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x5x2xf32>) -> tensor<2x5x2xf32>
  // CHECK: %[[Y4:.*]] = hps.onnx_node "DFT"(%arg1, %arg2)
  %4 = hps.onnx_node "DFT"(%c, %n) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x5x2xf32>, tensor<i64>) -> tensor<2x?x2xf32>
  // CHECK: return %[[Y0]], %[[Y1]], %[[Y2]], %[[Y3]], %[[Y4]]
  return %0, %1, %2, %3, %4 : tensor<2x4x3x2xf32>, tensor<2x4x2x2xf32>, tensor<2x3x2xf32>, tensor<2x5x2xf32>, tensor<2x?x2xf32>
}

// STFT (17): the frames gathered at constant positions, then the DFT's
// matmul. A constant window scales the matrix's rows; a run-time or
// trainable one multiplies the frames.
// CHECK-LABEL: func @stft
func.func @stft(%s: tensor<1x10x1xf32>, %w: tensor<4xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) {
  %step = hps.constant dense<3> : tensor<i64>
  %hann = hps.constant dense<[0.0, 0.5, 1.0, 0.5]> : tensor<4xf32>
  // CHECK-DAG: %[[PLAIN:.*]] = hps.constant dense<{{\[\[}}1.000000e+00, -0.000000e+00, 1.000000e+00, {{.*}} : tensor<4x6xf32>
  // CHECK-DAG: %[[WINDOWED:.*]] = hps.constant dense<{{\[\[}}0.000000e+00, -0.000000e+00, 0.000000e+00, -0.000000e+00, 0.000000e+00, -0.000000e+00], [5.000000e-01, -0.000000e+00, 0.000000e+00, -5.000000e-01, {{.*}} : tensor<4x6xf32>
  // CHECK-DAG: %[[AT:.*]] = hps.constant dense<{{\[\[}}0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]> : tensor<3x4xi64>
  // CHECK: %[[F0:.*]] = hps.gather %arg0, %[[AT]] {axis = 1 : i64} : (tensor<1x10x1xf32>, tensor<3x4xi64>) -> tensor<1x3x4x1xf32>
  // CHECK: %[[R0:.*]] = hps.reshape %[[F0]] {shape = array<i64: 3, 4>}
  // CHECK: %[[M0:.*]] = hps.matmul %[[R0]], %[[WINDOWED]]
  // CHECK: %[[Y0:.*]] = hps.reshape %[[M0]] {shape = array<i64: 1, 3, 3, 2>}
  %0 = hps.onnx_node "STFT"(%s, %step, %hann) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x10x1xf32>, tensor<i64>, tensor<4xf32>) -> tensor<1x3x3x2xf32>
  // CHECK: %[[F1:.*]] = hps.gather %arg0, %[[AT]] {axis = 1 : i64}
  // CHECK: %[[W1:.*]] = hps.reshape %arg1 {shape = array<i64: 4, 1>}
  // CHECK: %[[X1:.*]] = hps.mul %[[F1]], %[[W1]]
  // CHECK: %[[R1:.*]] = hps.reshape %[[X1]] {shape = array<i64: 3, 4>}
  // CHECK: %[[M1:.*]] = hps.matmul %[[R1]], %[[PLAIN]]
  // CHECK: %[[Y1:.*]] = hps.reshape %[[M1]] {shape = array<i64: 1, 3, 3, 2>}
  %1 = hps.onnx_node "STFT"(%s, %step, %w) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x10x1xf32>, tensor<i64>, tensor<4xf32>) -> tensor<1x3x3x2xf32>
  // An initializer is a weight (training updates it), so it is not folded.
  // CHECK: %[[F2:.*]] = hps.gather %arg0, %[[AT]] {axis = 1 : i64}
  // CHECK: %[[W2:.*]] = hps.reshape %{{.*}} {shape = array<i64: 4, 1>}
  // CHECK: %[[X2:.*]] = hps.mul %[[F2]], %[[W2]]
  // CHECK: %[[M2:.*]] = hps.matmul %{{.*}}, %[[PLAIN]]
  // CHECK: %[[Y2:.*]] = hps.reshape %[[M2]] {shape = array<i64: 1, 3, 3, 2>}
  %learned = hps.weight "window" dense<[0.0, 0.5, 1.0, 0.5]> : tensor<4xf32>
  %2 = hps.onnx_node "STFT"(%s, %step, %learned) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x10x1xf32>, tensor<i64>, tensor<4xf32>) -> tensor<1x3x3x2xf32>
  // CHECK: return %[[Y0]], %[[Y1]], %[[Y2]]
  return %0, %1, %2 : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>
}

// MelWeightMatrix (17) of constants folds: 2 mel bands over the 5 bins of
// an 8-point DFT at 8 kHz, band edges at bins 0, 0, 1 and 2 (floor(9 f /
// 8000) of 0, 427, 1114 and 2219 Hz, equally spaced in mel up to 4 kHz). A
// run-time operand stays generic.
// CHECK-LABEL: func @mel
func.func @mel(%n: tensor<i64>) -> (tensor<5x2xf32>, tensor<5x?xf32>) {
  %bins = hps.constant dense<2> : tensor<i64>
  %dft = hps.constant dense<8> : tensor<i64>
  %rate = hps.constant dense<8000> : tensor<i64>
  %lo = hps.constant dense<0.0> : tensor<f32>
  %hi = hps.constant dense<4000.0> : tensor<f32>
  // CHECK: %[[C:.*]] = hps.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<5x2xf32>
  %0 = hps.onnx_node "MelWeightMatrix"(%bins, %dft, %rate, %lo, %hi) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<5x2xf32>
  // CHECK: %[[G:.*]] = hps.onnx_node "MelWeightMatrix"(%arg0,
  %1 = hps.onnx_node "MelWeightMatrix"(%n, %dft, %rate, %lo, %hi) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<5x?xf32>
  // CHECK: return %[[C]], %[[G]]
  return %0, %1 : tensor<5x2xf32>, tensor<5x?xf32>
}

// DFT (20): the axis is a constant scalar input, -2 when omitted; an axis
// attribute is opset 17's and stays generic.
// CHECK-LABEL: func @dft_20
func.func @dft_20(%x: tensor<2x4x3x1xf32>) -> (tensor<2x4x2x2xf32>, tensor<2x3x3x2xf32>, tensor<2x4x2x2xf32>) {
  // CHECK: hps.reshape %arg0 {shape = array<i64: 8, 3>}
  %none = hps.none
  %0 = hps.onnx_node "DFT"(%x) {attrs = {onesided = 1 : i64}, domain = "", opset = 20 : i64} : (tensor<2x4x3x1xf32>) -> tensor<2x4x2x2xf32>
  // Along axis 1: moved last but one first.
  // CHECK: hps.transpose %arg0 {perm = array<i64: 0, 2, 1, 3>}
  %one = hps.constant dense<1> : tensor<i64>
  %1 = hps.onnx_node "DFT"(%x, %none, %one) {attrs = {onesided = 1 : i64}, domain = "", opset = 20 : i64} : (tensor<2x4x3x1xf32>, none, tensor<i64>) -> tensor<2x3x3x2xf32>
  // CHECK: hps.onnx_node "DFT"
  %2 = hps.onnx_node "DFT"(%x) {attrs = {axis = -2 : i64, onesided = 1 : i64}, domain = "", opset = 20 : i64} : (tensor<2x4x3x1xf32>) -> tensor<2x4x2x2xf32>
  return %0, %1, %2 : tensor<2x4x2x2xf32>, tensor<2x3x3x2xf32>, tensor<2x4x2x2xf32>
}
