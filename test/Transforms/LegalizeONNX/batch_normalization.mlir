// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-8 (BatchNormalization 7): spatial=1 (the default) normalizes
// per channel; spatial=0 keeps per-element statistics and stays generic.
// CHECK-LABEL: func @spatial
func.func @spatial(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  // CHECK: hps.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 {device = #hps.device<"gpu.0">} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %0 = hps.onnx_node "BatchNormalization"(%x, %s, %b, %m, %v) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // momentum is kept for training with batch statistics (moving averages).
  // CHECK: hps.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 1.000000e-03 : f32, hps.momentum = 8.000000e-01 : f32} :
  %1 = hps.onnx_node "BatchNormalization"(%x, %s, %b, %m, %v) {attrs = {spatial = 1 : i64, epsilon = 1.0e-3 : f32, momentum = 0.8 : f32}, domain = "", opset = 8 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // CHECK: hps.onnx_node "BatchNormalization"{{.*}}spatial = 0
  %2 = hps.onnx_node "BatchNormalization"(%x, %s, %b, %m, %v) {attrs = {spatial = 0 : i64}, domain = "", opset = 8 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0, %1, %2 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// Opsets 9-13: the outputs select the mode. Declaring the statistics
// outputs (typed [C] here) means training mode, where Y uses batch
// statistics: generic even when nothing reads them. Omitted optional
// outputs (which the importer gives Y's type) do not count.
// CHECK-LABEL: func @output_mode
func.func @output_mode(%x: tensor<?x3x8xf32>, %s: tensor<3xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x8xf32>, tensor<?x3x8xf32>) {
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 : (tensor<?x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x8xf32>
  %0 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {epsilon = 1.0e-5 : f32}, domain = "", opset = 9 : i64} : (tensor<?x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x8xf32>
  // CHECK: hps.onnx_node "BatchNormalization"{{.*}}opset = 13
  %1:5 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 :
  %2:3 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<?x3x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x8xf32>, tensor<?x3x8xf32>)
  return %0, %1#0, %2#0 : tensor<?x3x8xf32>, tensor<?x3x8xf32>, tensor<?x3x8xf32>
}

// -----

// Opsets 14-17: training_mode (default 0) selects the mode; the
// running-statistics outputs must be unused.
// CHECK-LABEL: func @training_mode
func.func @training_mode(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) {
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 :
  %0 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 {epsilon = 1.000000e-01 : f32} :
  %1:3 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {training_mode = 0 : i64, epsilon = 0.1 : f32}, domain = "", opset = 15 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  // training_mode=1: batch statistics (see @batch_statistics).
  // CHECK: hps.reduce  mean %arg0 {axes = array<i64: 0>, keepdims}
  %2 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {training_mode = 1 : i64}, domain = "", opset = 15 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // In inference mode a read running mean keeps the node generic.
  // CHECK: hps.onnx_node "BatchNormalization"{{.*}}opset = 17
  %3:2 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return %0, %1#0, %2, %3#0, %3#1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>
}

// -----

// Opset 6 (BatchNormalization 6): is_test=1 is the inference form; the
// default is_test=0 normalizes with batch statistics and stays generic.
// CHECK-LABEL: func @opset6
func.func @opset6(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  // CHECK: hps.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 {epsilon = 1.000000e-03 : f32, hps.momentum = 0.8999{{[0-9]*}} : f32}
  %0 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {epsilon = 1.0e-3 : f32, is_test = 1 : i64, momentum = 0.9 : f32}, domain = "", opset = 6 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // CHECK: hps.onnx_node "BatchNormalization"{{.*}}opset = 6
  %1 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0, %1 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// training_mode=1 (14-17): Y normalized with the batch's mean and
// population variance over N and the spatial axes; the running statistics
// move towards them by 1 - momentum.
// CHECK-LABEL: func @batch_statistics
func.func @batch_statistics(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK: %[[MEAN:.*]] = hps.reduce  mean %arg0 {axes = array<i64: 0, 2>, keepdims} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK: %[[C:.*]] = hps.sub %arg0, %[[MEAN]]
  // CHECK: %[[SQ:.*]] = hps.mul %[[C]], %[[C]]
  // CHECK: %[[VAR:.*]] = hps.reduce  mean %[[SQ]] {axes = array<i64: 0, 2>, keepdims}
  // CHECK: hps.add %[[VAR]], %{{.*}} : tensor<1x3x1xf32>, tensor<f32>
  // CHECK: hps.sqrt
  // CHECK: hps.reciprocal
  // CHECK: %[[Y:.*]] = hps.add %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<2x3x4xf32>
  // CHECK: %[[KEPT:.*]] = hps.mul %arg3, %{{.*}} : tensor<3xf32>, tensor<f32>
  // CHECK: %[[BM:.*]] = hps.reshape %[[MEAN]] {shape = array<i64: 3>}
  // CHECK: %[[MOVED:.*]] = hps.mul %[[BM]], %{{.*}}
  // CHECK: %[[RM:.*]] = hps.add %[[KEPT]], %[[MOVED]]
  // CHECK: %[[RV:.*]] = hps.add
  // CHECK: return %[[Y]], %[[RM]], %[[RV]]
  %0:3 = hps.onnx_node "BatchNormalization"(%x, %s, %b, %m, %v) {attrs = {training_mode = 1 : i64, momentum = 0.8 : f32}, domain = "", opset = 15 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// BatchNormalization 15: scale and B (T1) and mean and var (T2) may have
// other float types than X; they are cast to X's, the one type
// hps.batch_norm takes (the kernel read f64 statistics as f32 bytes).
// CHECK-LABEL: func @mixed_statistics
func.func @mixed_statistics(%x: tensor<2x3x4xf32>, %s: tensor<3xf64>, %m: tensor<3xf16>) -> tensor<2x3x4xf32> {
  // CHECK: %[[S:.*]] = hps.cast %arg1 : (tensor<3xf64>) -> tensor<3xf32>
  // CHECK: %[[B:.*]] = hps.cast %arg1 : (tensor<3xf64>) -> tensor<3xf32>
  // CHECK: %[[M:.*]] = hps.cast %arg2 : (tensor<3xf16>) -> tensor<3xf32>
  // CHECK: %[[V:.*]] = hps.cast %arg2 : (tensor<3xf16>) -> tensor<3xf32>
  // CHECK: hps.batch_norm %arg0, %[[S]], %[[B]], %[[M]], %[[V]] : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "BatchNormalization"(%x, %s, %s, %m, %m) {attrs = {}, domain = "", opset = 15 : i64} : (tensor<2x3x4xf32>, tensor<3xf64>, tensor<3xf64>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
