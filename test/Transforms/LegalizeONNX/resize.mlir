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

// Stays generic: linear mode; a fractional scale; factor 3 with asymmetric
// round_prefer_floor (output 2 reads input 1, not 0); align_corners.
// CHECK-LABEL: func @resize_generic
func.func @resize_generic(%x: tensor<1x2x3x4xf32>) -> (tensor<1x2x6x8xf32>, tensor<1x2x4x6xf32>, tensor<1x2x9x4xf32>, tensor<1x2x6x8xf32>) {
  %none = hps.none
  %two = hps.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %frac = hps.constant dense<[1.0, 1.0, 1.5, 1.5]> : tensor<4xf32>
  %three = hps.constant dense<[1.0, 1.0, 3.0, 1.0]> : tensor<4xf32>
  // CHECK: hps.onnx_node "Resize"{{.*}}mode = "linear"
  %0 = hps.onnx_node "Resize"(%x, %none, %two) {attrs = {mode = "linear"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  // CHECK: hps.onnx_node "Resize"
  %1 = hps.onnx_node "Resize"(%x, %none, %frac) {attrs = {mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x4x6xf32>
  // CHECK: hps.onnx_node "Resize"{{.*}}asymmetric
  %2 = hps.onnx_node "Resize"(%x, %none, %three) {attrs = {coordinate_transformation_mode = "asymmetric", mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x9x4xf32>
  // CHECK: hps.onnx_node "Resize"{{.*}}align_corners
  %3 = hps.onnx_node "Resize"(%x, %none, %two) {attrs = {coordinate_transformation_mode = "align_corners", mode = "nearest"}, domain = "", opset = 13 : i64} : (tensor<1x2x3x4xf32>, none, tensor<4xf32>) -> tensor<1x2x6x8xf32>
  return %0, %1, %2, %3 : tensor<1x2x6x8xf32>, tensor<1x2x4x6xf32>, tensor<1x2x9x4xf32>, tensor<1x2x6x8xf32>
}
