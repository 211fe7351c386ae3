// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Nearest upsampling by whole factors is an in-place repeat: a unit axis
// after each scaled one, broadcast to the factor and folded back in.
// Resize-11+ with scales (asymmetric + floor, PyTorch's nn.Upsample) or
// sizes (half_pixel + round_prefer_floor, the defaults); Upsample-9.
// CHECK-LABEL: func @resize_nearest
func.func @resize_nearest(%x: tensor<1x2x3x4xf32>) -> (tensor<1x2x6x8xf32>, tensor<1x2x9x4xf32>, tensor<1x2x6x8xf32>) {
  %none = hps.none
  %scales = hps.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  // CHECK: %[[S:.*]] = hps.reshape %arg0 {shape = array<i64: 1, 2, 3, 1, 4, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x1x4x1xf32>
  // CHECK: %[[E:.*]] = hps.expand %[[S]] {shape = array<i64: 1, 2, 3, 2, 4, 2>}
  // CHECK: %[[A:.*]] = hps.reshape %[[E]] {shape = array<i64: 1, 2, 6, 8>}
  %0 = hps.onnx_node "Resize"(%x, %none, %scales) {attrs = {coordinate_transformation_mode = "asymmetric", mode = "nearest", nearest_mode = "floor"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  %sizes = hps.constant dense<[1, 2, 9, 4]> : tensor<4xi64>
  // CHECK: hps.expand {{.*}} {shape = array<i64: 1, 2, 3, 3, 4>}
  // CHECK: %[[B:.*]] = hps.reshape {{.*}} {shape = array<i64: 1, 2, 9, 4>}
  %1 = hps.onnx_node "Resize"(%x, %none, %none, %sizes) {attrs = {mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, none, tensor<4xi64>) -> tensor<1x2x9x4xf32>
  // CHECK: %[[C:.*]] = hps.reshape {{.*}} {shape = array<i64: 1, 2, 6, 8>}
  %2 = hps.onnx_node "Upsample"(%x, %scales) {attrs = {mode = "nearest"}, domain = "", opset = 9 : i64} : (tensor<1x2x3x4xf32>, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  return %0, %1, %2 : tensor<1x2x6x8xf32>, tensor<1x2x9x4xf32>, tensor<1x2x6x8xf32>
}

// -----

// Linear: one matmul per resized axis with the constant interpolation
// matrix, x @ M^T on a [P, in] view for the last axis, M @ x on a
// [P, in, T] view for the others. half_pixel 2x from 4: output 1 sits at
// 0.25, between inputs 0 and 1.
// CHECK-LABEL: func @resize_linear
func.func @resize_linear(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %none = hps.none
  %two = hps.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<{{\[}}[1.000000e+00, 7.500000e-01, 2.500000e-01, 0.000000e+00, {{.*}}]]> : tensor<4x8xf32>
  // CHECK-DAG: %[[H:.*]] = hps.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00], [7.500000e-01, 2.500000e-01, 0.000000e+00], {{.*}}]]> : tensor<6x3xf32>
  // CHECK: %[[V:.*]] = hps.reshape %arg0 {shape = array<i64: 2, 3, 4>}
  // CHECK: %[[N:.*]] = hps.matmul %[[H]], %[[V]] : (tensor<6x3xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  // CHECK: %[[R:.*]] = hps.reshape %[[N]] {shape = array<i64: 12, 4>}
  // CHECK: %[[M:.*]] = hps.matmul %[[R]], %[[W]] : (tensor<12x4xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  // CHECK: %[[Y:.*]] = hps.reshape %[[M]] {shape = array<i64: 1, 2, 6, 8>}
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "Resize"(%x, %none, %two) {attrs = {mode = "linear"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Nearest resizes that are not whole-factor repeats gather along each
// resized axis with constant indices: a fractional scale (half_pixel,
// round_prefer_floor), and factor 3 with asymmetric round_prefer_floor
// (output 2 reads input 1). align_corners 2x happens to be a repeat.
// CHECK-LABEL: func @resize_nearest_gather
func.func @resize_nearest_gather(%x: tensor<1x2x3x4xf32>) -> (tensor<1x2x4x6xf32>, tensor<1x2x9x4xf32>, tensor<1x2x6x8xf32>) {
  %none = hps.none
  %two = hps.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %frac = hps.constant dense<[1.0, 1.0, 1.5, 1.5]> : tensor<4xf32>
  %three = hps.constant dense<[1.0, 1.0, 3.0, 1.0]> : tensor<4xf32>
  // CHECK-DAG: %[[K:.*]] = hps.constant dense<[0, 0, 1, 1, 1, 2, 2, 2, 2]> : tensor<9xi64>
  // CHECK-DAG: %[[J:.*]] = hps.constant dense<[0, 0, 1, 2, 2, 3]> : tensor<6xi64>
  // CHECK-DAG: %[[I:.*]] = hps.constant dense<[0, 0, 1, 2]> : tensor<4xi64>
  // CHECK: %[[G:.*]] = hps.gather %arg0, %[[I]] {axis = 2 : i64}
  // CHECK: %[[A:.*]] = hps.gather %[[G]], %[[J]] {axis = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<6xi64>) -> tensor<1x2x4x6xf32>
  %0 = hps.onnx_node "Resize"(%x, %none, %frac) {attrs = {mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x4x6xf32>
  // CHECK: %[[B:.*]] = hps.gather %arg0, %[[K]] {axis = 2 : i64}
  %1 = hps.onnx_node "Resize"(%x, %none, %three) {attrs = {coordinate_transformation_mode = "asymmetric", mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x9x4xf32>
  // CHECK: hps.expand {{.*}} {shape = array<i64: 1, 2, 3, 2, 4, 2>}
  // CHECK: %[[C:.*]] = hps.reshape {{.*}} {shape = array<i64: 1, 2, 6, 8>}
  %2 = hps.onnx_node "Resize"(%x, %none, %two) {attrs = {coordinate_transformation_mode = "align_corners", mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  return %0, %1, %2 : tensor<1x2x4x6xf32>, tensor<1x2x9x4xf32>, tensor<1x2x6x8xf32>
}

// -----

// Cubic (Keys, a = -0.75): output 0 sits at -0.25, so its taps at -2..1
// clamp to [0, 1] and merge; output 1 at 0.25 has four.
// CHECK-LABEL: func @resize_cubic
func.func @resize_cubic(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x8xf32> {
  %none = hps.none
  %scales = hps.constant dense<[1.0, 1.0, 1.0, 2.0]> : tensor<4xf32>
  // CHECK: %[[W:.*]] = hps.constant dense<{{\[}}[1.10546875, 0.7734375, 0.2265625, -0.10546875, -0.03515625, 0.000000e+00, 0.000000e+00, 0.000000e+00], [-0.10546875, 0.26171875, 0.87890625, {{.*}}]]> : tensor<4x8xf32>
  // CHECK: %[[R:.*]] = hps.reshape %arg0 {shape = array<i64: 4, 4>}
  // CHECK: hps.matmul %[[R]], %[[W]]
  %0 = hps.onnx_node "Resize"(%x, %none, %scales) {attrs = {mode = "cubic"}, domain = "", opset = 13 : i64} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// tf_crop_and_resize, roi [0.5, 1.5] of the last axis: outputs at 1.5, 3
// and 4.5; the last lies outside, so its column is zero and
// extrapolation_value is added there.
// CHECK-LABEL: func @resize_crop
func.func @resize_crop(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x3xf32> {
  %none = hps.none
  %roi = hps.constant dense<[0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.5]> : tensor<8xf32>
  %sizes = hps.constant dense<[1, 1, 4, 3]> : tensor<4xi64>
  // CHECK-DAG: %[[E:.*]] = hps.constant dense<{{\[\[\[\[}}0.000000e+00, 0.000000e+00, 7.000000e+00]]]]> : tensor<1x1x1x3xf32>
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<{{\[}}[0.000000e+00, 0.000000e+00, 0.000000e+00], [5.000000e-01, 0.000000e+00, 0.000000e+00], [5.000000e-01, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<4x3xf32>
  // CHECK: %[[M:.*]] = hps.matmul {{.*}}, %[[W]]
  // CHECK: %[[R:.*]] = hps.reshape %[[M]] {shape = array<i64: 1, 1, 4, 3>}
  // CHECK: %[[Y:.*]] = hps.add %[[R]], %[[E]]
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "Resize"(%x, %roi, %none, %sizes) {attrs = {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 7.0 : f32, mode = "linear"}, domain = "", opset = 13 : i64} : (tensor<1x1x4x4xf32>, tensor<8xf32>, none, tensor<4xi64>) -> tensor<1x1x4x3xf32>
  return %0 : tensor<1x1x4x3xf32>
}

// -----

// Stays generic: scales that are not constant; linear on integers.
// CHECK-LABEL: func @resize_generic
func.func @resize_generic(%x: tensor<1x2x3x4xf32>, %s: tensor<4xf32>, %i: tensor<1x2x3x4xi32>) -> (tensor<1x2x6x8xf32>, tensor<1x2x6x8xi32>) {
  %none = hps.none
  %two = hps.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  // CHECK: hps.onnx_node "Resize"
  %0 = hps.onnx_node "Resize"(%x, %none, %s) {attrs = {mode = "linear"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  // CHECK: hps.onnx_node "Resize"{{.*}}mode = "linear"
  %1 = hps.onnx_node "Resize"(%i, %none, %two) {attrs = {mode = "linear"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xi32>, none, tensor<4xf32>) -> tensor<1x2x6x8xi32>
  return %0, %1 : tensor<1x2x6x8xf32>, tensor<1x2x6x8xi32>
}

// -----

// A result func.return reads with a less static declared type (sizes that
// ONNX shape inference could not read): the decomposition's last op takes
// that type, and the signature becomes static afterwards.
// CHECK-LABEL: func @resize_returned_dynamic
// CHECK-SAME: -> tensor<1x1x4x4xf32>
func.func @resize_returned_dynamic(%x: tensor<1x1x2x2xf32>) -> tensor<?x?x?x?xf32> {
  %none = hps.none
  %sizes = hps.constant dense<[1, 1, 4, 4]> : tensor<4xi64>
  // CHECK-NOT: hps.onnx_node
  // CHECK: %[[Y:.*]] = hps.reshape {{.*}} -> tensor<1x1x4x4xf32>
  // CHECK: return %[[Y]] : tensor<1x1x4x4xf32>
  %0 = hps.onnx_node "Resize"(%x, %none, %none, %sizes) {attrs = {mode = "linear"}, domain = "", opset = 13 : i64} : (tensor<1x1x2x2xf32>, none, none, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// Opset 18: sizes for the listed axes only, kept to the aspect ratio: one
// scale, the smaller of 5/6 and 4/8 (not_larger), for both; 6x8 -> 3x4.
// CHECK-LABEL: func @resize_18_axes_not_larger
func.func @resize_18_axes_not_larger(%x: tensor<1x2x6x8xf32>) -> tensor<1x2x3x4xf32> {
  %none = hps.none
  %s = hps.constant dense<[5, 4]> : tensor<2xi64>
  // CHECK-DAG: %[[COLS:.*]] = hps.constant dense<[0, 2, 4, 6]> : tensor<4xi64>
  // CHECK-DAG: %[[ROWS:.*]] = hps.constant dense<[0, 2, 4]> : tensor<3xi64>
  // CHECK: %[[H:.*]] = hps.gather %arg0, %[[ROWS]] {axis = 2 : i64}
  // CHECK: hps.gather %[[H]], %[[COLS]] {axis = 3 : i64} : (tensor<1x2x3x8xf32>, tensor<4xi64>) -> tensor<1x2x3x4xf32>
  %0 = hps.onnx_node "Resize"(%x, %none, %none, %s) {attrs = {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger", mode = "nearest"}, domain = "", opset = 18 : i64} : (tensor<1x2x6x8xf32>, none, none, tensor<2xi64>) -> tensor<1x2x3x4xf32>
  return %0 : tensor<1x2x3x4xf32>
}

// -----

// antialias stretches the linear filter by 1 / scale when shrinking: 4 -> 2
// at half_pixel averages each pair with its neighbours, weights 1/8, 3/8,
// 3/8, 1/8 (edge replicated), as one interpolation matmul.
// CHECK-LABEL: func @resize_18_antialias
func.func @resize_18_antialias(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %none = hps.none
  %s = hps.constant dense<[0.5]> : tensor<1xf32>
  // CHECK: hps.constant dense<{{\[}}[5.000000e-01, 0.000000e+00], [3.750000e-01, 1.250000e-01], [1.250000e-01, 3.750000e-01], [0.000000e+00, 5.000000e-01]]> : tensor<4x2xf32>
  // CHECK: hps.matmul
  %0 = hps.onnx_node "Resize"(%x, %none, %s) {attrs = {antialias = 1 : i64, axes = array<i64: 1>, mode = "linear"}, domain = "", opset = 18 : i64} : (tensor<3x4xf32>, none, tensor<1xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// antialias is opset 18's: at 17 the node stays generic.
// CHECK-LABEL: func @resize_17_antialias
func.func @resize_17_antialias(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %none = hps.none
  %s = hps.constant dense<[1.0, 0.5]> : tensor<2xf32>
  // CHECK: hps.onnx_node "Resize"
  %0 = hps.onnx_node "Resize"(%x, %none, %s) {attrs = {antialias = 1 : i64, mode = "linear"}, domain = "", opset = 17 : i64} : (tensor<3x4xf32>, none, tensor<2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Opset 19's half_pixel_symmetric: 5 -> 2 nearest at scale 0.5 (2.5
// outputs, rounded down) shifts the sample points by 5 / 2 * (1 - 2 / 2.5)
// = 0.5, to 1 and 3, where half_pixel's 0.5 and 2.5 would pick 0 and 2.
// CHECK-LABEL: func @resize_19_half_pixel_symmetric
func.func @resize_19_half_pixel_symmetric(%x: tensor<3x5xf32>) -> tensor<3x2xf32> {
  %none = hps.none
  %s = hps.constant dense<[0.5]> : tensor<1xf32>
  // CHECK: hps.constant dense<[1, 3]> : tensor<2xi64>
  %0 = hps.onnx_node "Resize"(%x, %none, %s) {attrs = {axes = array<i64: 1>, coordinate_transformation_mode = "half_pixel_symmetric", mode = "nearest"}, domain = "", opset = 19 : i64} : (tensor<3x5xf32>, none, tensor<1xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// half_pixel_symmetric is opset 19's: at 18 the node stays generic.
// CHECK-LABEL: func @resize_18_half_pixel_symmetric
func.func @resize_18_half_pixel_symmetric(%x: tensor<3x5xf32>) -> tensor<3x2xf32> {
  %none = hps.none
  %s = hps.constant dense<[0.5]> : tensor<1xf32>
  // CHECK: hps.onnx_node "Resize"
  %0 = hps.onnx_node "Resize"(%x, %none, %s) {attrs = {axes = array<i64: 1>, coordinate_transformation_mode = "half_pixel_symmetric", mode = "nearest"}, domain = "", opset = 18 : i64} : (tensor<3x5xf32>, none, tensor<1xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
