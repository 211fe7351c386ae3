// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// GridSample: the grid's coordinates unnormalised on [N, Ho, Wo] planes
// (align_corners 0: ((g + 1) * extent - 1) / 2), rounded for nearest, and
// gathered as whole positions from X laid out as [N * H * W + 1, C], whose
// last row (zeros) is what points outside the image read under zero
// padding; the [N, Ho, Wo, C] result transposed back.
// CHECK-LABEL: func @grid_sample_nearest
func.func @grid_sample_nearest(%x: tensor<1x2x3x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-DAG: %[[OUTSIDE:.*]] = hps.constant dense<1.200000e+01> : tensor<f32>
  // CHECK-DAG: %[[ZEROROW:.*]] = hps.constant dense<0.000000e+00> : tensor<1x2xf32>
  // CHECK: %[[GX:.*]] = hps.slice %arg1 {axes = array<i64: 3>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK: %[[X:.*]] = hps.round
  // CHECK: %[[GY:.*]] = hps.slice %arg1 {axes = array<i64: 3>, ends = array<i64: 2>, starts = array<i64: 1>
  // CHECK: %[[Y:.*]] = hps.round
  // CHECK: %[[NHWC:.*]] = hps.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
  // CHECK: %[[ROWS:.*]] = hps.reshape %[[NHWC]] {shape = array<i64: 12, 2>}
  // CHECK: %[[TABLE:.*]] = hps.concat %[[ROWS]], %[[ZEROROW]] {axis = 0 : i64}
  // CHECK: %[[POSITION:.*]] = hps.where %{{.*}}, %{{.*}}, %[[OUTSIDE]]
  // CHECK: %[[INDICES:.*]] = hps.cast %[[POSITION]] : (tensor<1x2x2xf32>) -> tensor<1x2x2xi64>
  // CHECK: %[[SAMPLED:.*]] = hps.gather %[[TABLE]], %[[INDICES]] : (tensor<13x2xf32>, tensor<1x2x2xi64>) -> tensor<1x2x2x2xf32>
  // CHECK: %[[Y:.*]] = hps.transpose %[[SAMPLED]] {perm = array<i64: 0, 3, 1, 2>}
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "GridSample"(%x, %g) {attrs = {mode = "nearest"}, domain = "", opset = 16 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Bilinear: four gathers at the floor and floor + 1 corners, weighted by
// the fractional parts; border padding clamps both coordinates once either
// leaves the image.
// CHECK-LABEL: func @grid_sample_bilinear_border
func.func @grid_sample_bilinear_border(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: hps.or
  // CHECK: hps.clip {{.*}} {max = 2.000000e+00 : f64, min = 0.000000e+00 : f64}
  // CHECK: hps.floor
  // CHECK-COUNT-4: hps.gather
  // CHECK-NOT: hps.gather
  // CHECK: hps.transpose
  %0 = hps.onnx_node "GridSample"(%x, %g) {attrs = {padding_mode = "border", align_corners = 1 : i64}, domain = "", opset = 16 : i64} : (tensor<1x1x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Bicubic: sixteen taps.
// CHECK-LABEL: func @grid_sample_bicubic
func.func @grid_sample_bicubic(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK-COUNT-16: hps.gather
  // CHECK-NOT: hps.gather
  %0 = hps.onnx_node "GridSample"(%x, %g) {attrs = {mode = "bicubic"}, domain = "", opset = 16 : i64} : (tensor<1x1x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Stay generic: an unknown mode, a dynamic batch.
// CHECK-LABEL: func @grid_sample_generic
func.func @grid_sample_generic(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x2x2xf32>, %xd: tensor<?x1x3x3xf32>, %gd: tensor<?x2x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<?x1x2x2xf32>) {
  // CHECK-COUNT-2: hps.onnx_node "GridSample"
  %0 = hps.onnx_node "GridSample"(%x, %g) {attrs = {mode = "linear"}, domain = "", opset = 16 : i64} : (tensor<1x1x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  %1 = hps.onnx_node "GridSample"(%xd, %gd) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<?x1x3x3xf32>, tensor<?x2x2x2xf32>) -> tensor<?x1x2x2xf32>
  return %0, %1 : tensor<1x1x2x2xf32>, tensor<?x1x2x2xf32>
}

// -----

// Opset 20 names the modes linear and cubic (bilinear and bicubic before),
// with linear the default; the old names stay generic there.
// CHECK-LABEL: func @grid_sample_20
func.func @grid_sample_20(%x: tensor<1x1x3x3xf32>, %g: tensor<1x2x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK-NOT: hps.onnx_node "GridSample"(%arg0, %arg1) {attrs = {}
  %0 = hps.onnx_node "GridSample"(%x, %g) {attrs = {}, domain = "", opset = 20 : i64} : (tensor<1x1x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  // CHECK: hps.onnx_node "GridSample"(%arg0, %arg1) {attrs = {mode = "bilinear"}
  %1 = hps.onnx_node "GridSample"(%x, %g) {attrs = {mode = "bilinear"}, domain = "", opset = 20 : i64} : (tensor<1x1x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// AffineGrid (20): the constant base grid (x, y, 1) per point, x along the
// last axis, times theta transposed; align_corners 0 spaces 3 points at
// -2/3, 0, 2/3.
// CHECK-LABEL: func @affine_grid
func.func @affine_grid(%theta: tensor<2x2x3xf32>) -> tensor<2x2x3x2xf32> {
  %size = hps.constant dense<[2, 1, 2, 3]> : tensor<4xi64>
  // CHECK-DAG: %[[BASE:.*]] = hps.constant dense<{{\[}}[-0.666666686, -5.000000e-01, 1.000000e+00], [0.000000e+00, -5.000000e-01, 1.000000e+00], [0.666666686, -5.000000e-01, 1.000000e+00], [-0.666666686, 5.000000e-01, 1.000000e+00], [0.000000e+00, 5.000000e-01, 1.000000e+00], [0.666666686, 5.000000e-01, 1.000000e+00]]> : tensor<6x3xf32>
  // CHECK-DAG: %[[T:.*]] = hps.transpose %arg0 {perm = array<i64: 0, 2, 1>} : (tensor<2x2x3xf32>) -> tensor<2x3x2xf32>
  // CHECK: %[[G:.*]] = hps.matmul %[[BASE]], %[[T]] : (tensor<6x3xf32>, tensor<2x3x2xf32>) -> tensor<2x6x2xf32>
  // CHECK: hps.reshape %[[G]] {shape = array<i64: 2, 2, 3, 2>}
  %0 = hps.onnx_node "AffineGrid"(%theta, %size) {attrs = {}, domain = "", opset = 20 : i64} : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x2x3x2xf32>
  return %0 : tensor<2x2x3x2xf32>
}
