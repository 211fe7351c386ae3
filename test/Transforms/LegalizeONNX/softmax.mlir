// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opsets 7-12 coerce the input to 2-D at `axis` (default 1) and normalize
// each row, i.e. over every axis from `axis` on.
// CHECK-LABEL: func @coerced
func.func @coerced(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: %[[F:.*]] = hps.flatten %arg0 {axis = 1 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: %[[S:.*]] = hps.softmax %[[F]] {axis = 1 : i64, device = #hps.device<"gpu.0">} : (tensor<2x12xf32>) -> tensor<2x12xf32>
  // CHECK: %[[R:.*]] = hps.reshape %[[S]] {device = #hps.device<"gpu.0">, shape = array<i64: 2, 3, 4>} : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Softmax"(%x) {attrs = {}, domain = "", opset = 11 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // Axis 0: one row holding everything.
  // CHECK: %[[G:.*]] = hps.flatten %arg0 {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  // CHECK: %[[T:.*]] = hps.log_softmax %[[G]] {axis = 1 : i64} : (tensor<1x24xf32>) -> tensor<1x24xf32>
  // CHECK: %[[Q:.*]] = hps.reshape %[[T]] {shape = array<i64: 2, 3, 4>} : (tensor<1x24xf32>) -> tensor<2x3x4xf32>
  %1 = hps.onnx_node "LogSoftmax"(%x) {attrs = {axis = -3 : i64}, domain = "", opset = 12 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: return %[[R]], %[[Q]]
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// The last axis, or one followed only by size-1 axes, is a single op and
// needs no static shape.
// CHECK-LABEL: func @coerced_single_op
func.func @coerced_single_op(%x: tensor<2x3x4xf32>, %y: tensor<?x10xf32>, %z: tensor<?x5x1x1xf32>) -> (tensor<2x3x4xf32>, tensor<?x10xf32>, tensor<?x5x1x1xf32>) {
  // CHECK: hps.log_softmax %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "LogSoftmax"(%x) {attrs = {axis = 2 : i64}, domain = "", opset = 9 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.softmax %arg1 : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %1 = hps.onnx_node "Softmax"(%y) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  // CHECK: hps.softmax %arg2 {axis = 1 : i64} : (tensor<?x5x1x1xf32>) -> tensor<?x5x1x1xf32>
  %2 = hps.onnx_node "Softmax"(%z) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<?x5x1x1xf32>) -> tensor<?x5x1x1xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<?x10xf32>, tensor<?x5x1x1xf32>
}

// -----

// One dynamic axis before `axis` becomes the reshape's -1.
// CHECK-LABEL: func @coerced_dynamic_batch
func.func @coerced_dynamic_batch(%x: tensor<?x3x4xf32>) -> tensor<?x3x4xf32> {
  // CHECK: %[[F:.*]] = hps.flatten %arg0 {axis = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  // CHECK: %[[S:.*]] = hps.softmax %[[F]] {axis = 1 : i64} : (tensor<?x12xf32>) -> tensor<?x12xf32>
  // CHECK: hps.reshape %[[S]] {shape = array<i64: -1, 3, 4>} : (tensor<?x12xf32>) -> tensor<?x3x4xf32>
  %0 = hps.onnx_node "Softmax"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  return %0 : tensor<?x3x4xf32>
}

// -----

// Stay generic: dynamic axes after `axis`, two dynamic axes before it, an
// unranked input, an axis out of range.
// CHECK-LABEL: func @coerced_generic
func.func @coerced_generic(%a: tensor<2x?x4xf32>, %b: tensor<?x?x4x5xf32>, %c: tensor<*xf32>, %d: tensor<2x3xf32>) -> (tensor<2x?x4xf32>, tensor<?x?x4x5xf32>, tensor<*xf32>, tensor<2x3xf32>) {
  // CHECK: hps.onnx_node "Softmax"(%arg0)
  %0 = hps.onnx_node "Softmax"(%a) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  // CHECK: hps.onnx_node "Softmax"(%arg1)
  %1 = hps.onnx_node "Softmax"(%b) {attrs = {axis = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<?x?x4x5xf32>) -> tensor<?x?x4x5xf32>
  // CHECK: hps.onnx_node "LogSoftmax"(%arg2)
  %2 = hps.onnx_node "LogSoftmax"(%c) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.onnx_node "Softmax"(%arg3)
  %3 = hps.onnx_node "Softmax"(%d) {attrs = {axis = 2 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x?x4xf32>, tensor<?x?x4x5xf32>, tensor<*xf32>, tensor<2x3xf32>
}

// -----

// Opset 13+: one axis, default -1; any shape.
// CHECK-LABEL: func @single_axis
func.func @single_axis(%x: tensor<2x3x4xf32>, %u: tensor<*xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<*xf32>, tensor<2x3x4xf32>) {
  // CHECK: hps.softmax %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Softmax"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.log_softmax %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = hps.onnx_node "LogSoftmax"(%x) {attrs = {axis = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.softmax %arg1 {axis = 0 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  %2 = hps.onnx_node "Softmax"(%u) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.onnx_node "Softmax"{{.*}}axis = -4
  %3 = hps.onnx_node "Softmax"(%x) {attrs = {axis = -4 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<*xf32>, tensor<2x3x4xf32>
}
