// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// MaxUnpool: X scattered into zeros of the default shape ((in - 1) * stride
// + kernel - pads) at the whole-tensor positions in I; a negative run-time
// index goes past the end, where the scatter kernel stops the run.
// CHECK-LABEL: func @max_unpool
func.func @max_unpool(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32> {
  // CHECK-DAG: %[[ZEROS:.*]] = hps.constant dense<0.000000e+00> : tensor<32xf32>
  // CHECK-DAG: %[[PAST:.*]] = hps.constant dense<32> : tensor<i64>
  // CHECK: %[[OK:.*]] = hps.greater_equal %arg1
  // CHECK: %[[POS:.*]] = hps.where %[[OK]], %arg1, %[[PAST]]
  // CHECK: %[[S:.*]] = hps.scatter %[[ZEROS]], %[[POS]], %arg0 : (tensor<32xf32>, tensor<1x2x2x2xi64>, tensor<1x2x2x2xf32>) -> tensor<32xf32>
  // CHECK: %[[Y:.*]] = hps.reshape %[[S]] {shape = array<i64: 1, 2, 4, 4>}
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "MaxUnpool"(%x, %i) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// output_shape beyond the default: zeros appended at the end of each
// spatial axis, as the ONNX reference and onnxruntime do.
// CHECK-LABEL: func @max_unpool_output_shape
func.func @max_unpool_output_shape(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32> {
  // CHECK: %[[S:.*]] = hps.scatter
  // CHECK: %[[Y:.*]] = hps.reshape %[[S]] {shape = array<i64: 1, 1, 4, 4>}
  // CHECK: hps.pad %[[Y]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, value = 0.000000e+00 : f32}
  %s = hps.constant dense<[1, 1, 5, 5]> : tensor<4xi64>
  %0 = hps.onnx_node "MaxUnpool"(%x, %i, %s) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// Stay generic: an output_shape below the default, or not constant.
// CHECK-LABEL: func @max_unpool_generic
func.func @max_unpool_generic(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>, %s: tensor<4xi64>) -> (tensor<1x1x3x3xf32>, tensor<1x1x5x5xf32>) {
  // CHECK-COUNT-2: hps.onnx_node "MaxUnpool"
  %small = hps.constant dense<[1, 1, 3, 3]> : tensor<4xi64>
  %0 = hps.onnx_node "MaxUnpool"(%x, %i, %small) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x3x3xf32>
  %1 = hps.onnx_node "MaxUnpool"(%x, %i, %s) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0, %1 : tensor<1x1x3x3xf32>, tensor<1x1x5x5xf32>
}
