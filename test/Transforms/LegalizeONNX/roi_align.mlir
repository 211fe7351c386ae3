// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// RoiAlign (16): the samples' coordinates are arithmetic on [R, samples]
// planes of the rois; the four bilinear neighbours are hps.gathers of X as
// [N * H * W, C] rows; the cells average their ratio^2 samples.
// CHECK-LABEL: func @roi_align
func.func @roi_align(%x: tensor<2x3x8x8xf32>, %rois: tensor<5x4xf32>, %batch: tensor<5xi64>) -> (tensor<5x3x2x4xf32>, tensor<5x3x2x2xf32>, tensor<5x3x2x2xf32>) {
  // CHECK: %[[T:.*]] = hps.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x8x8x3xf32>
  // CHECK: %[[ROWS:.*]] = hps.reshape %[[T]] {shape = array<i64: 128, 3>}
  // CHECK-COUNT-4: hps.gather %[[ROWS]], %{{.*}} : (tensor<128x3xf32>, tensor<5x4x8xi64>) -> tensor<5x4x8x3xf32>
  // CHECK: %[[G:.*]] = hps.reshape %{{.*}} {shape = array<i64: 5, 2, 2, 4, 2, 3>}
  // CHECK: %[[P:.*]] = hps.reduce mean %[[G]] {axes = array<i64: 2, 4>} : (tensor<5x2x2x4x2x3xf32>) -> tensor<5x2x4x3xf32>
  // CHECK: %[[Y0:.*]] = hps.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<5x2x4x3xf32>) -> tensor<5x3x2x4xf32>
  %0 = hps.onnx_node "RoiAlign"(%x, %rois, %batch) {attrs = {output_height = 2 : i64, output_width = 4 : i64, sampling_ratio = 2 : i64}, domain = "", opset = 16 : i64} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x4xf32>
  // Max mode takes the largest weighted neighbour, then the largest sample.
  // CHECK: %[[M:.*]] = hps.reduce max %{{.*}} {axes = array<i64: 2, 4>}
  // CHECK: %[[Y1:.*]] = hps.transpose %[[M]]
  %1 = hps.onnx_node "RoiAlign"(%x, %rois, %batch) {attrs = {mode = "max", output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 1 : i64}, domain = "", opset = 16 : i64} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
  // sampling_ratio 0 samples each region by its own size: no static shape.
  // CHECK: %[[Y2:.*]] = hps.onnx_node "RoiAlign"
  %2 = hps.onnx_node "RoiAlign"(%x, %rois, %batch) {attrs = {output_height = 2 : i64, output_width = 2 : i64}, domain = "", opset = 16 : i64} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
  // CHECK: return %[[Y0]], %[[Y1]], %[[Y2]]
  return %0, %1, %2 : tensor<5x3x2x4xf32>, tensor<5x3x2x2xf32>, tensor<5x3x2x2xf32>
}
