// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Axes as an attribute (all but ReduceSum through opset 17); keepdims
// defaults to 1; no axes reduces every axis; negative axes count from the
// end.
// CHECK-LABEL: func @attr_axes
func.func @attr_axes(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x1x1xf32>, tensor<f32>, tensor<3xf32>) {
  // CHECK: hps.reduce mean %arg0 {axes = array<i64: 1>, device = #hps.device<"gpu.0">, keepdims} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %0 = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: hps.reduce max %arg0 {axes = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = hps.onnx_node "ReduceMax"(%x) {attrs = {axes = array<i64: -2>, keepdims = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK: hps.reduce l2 %arg0 {axes = array<i64>, keepdims} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %2 = hps.onnx_node "ReduceL2"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  // CHECK: hps.reduce min %arg0 {axes = array<i64>} : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = hps.onnx_node "ReduceMin"(%x) {attrs = {keepdims = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: hps.reduce prod %arg0 {axes = array<i64: 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %4 = hps.onnx_node "ReduceProd"(%x) {attrs = {axes = array<i64: 2, 0>, keepdims = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x1x1xf32>, tensor<f32>, tensor<3xf32>
}

// -----

// Every kind.
// CHECK-LABEL: func @kinds
func.func @kinds(%x: tensor<?x4xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  // CHECK: hps.reduce sum %arg0 {axes = array<i64: 1>, keepdims}
  %0 = hps.onnx_node "ReduceSum"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 7 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce mean %arg0
  %1 = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 17 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce max %arg0
  %2 = hps.onnx_node "ReduceMax"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 12 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce min %arg0
  %3 = hps.onnx_node "ReduceMin"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce prod %arg0
  %4 = hps.onnx_node "ReduceProd"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce l1 %arg0
  %5 = hps.onnx_node "ReduceL1"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce l2 %arg0
  %6 = hps.onnx_node "ReduceL2"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce log_sum %arg0
  %7 = hps.onnx_node "ReduceLogSum"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce log_sum_exp %arg0
  %8 = hps.onnx_node "ReduceLogSumExp"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  // CHECK: hps.reduce sum_square %arg0
  %9 = hps.onnx_node "ReduceSumSquare"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// ReduceSum 7-12 takes the axes attribute.
// CHECK-LABEL: func @sum_attr_axes
func.func @sum_attr_axes(%x: tensor<2x3x4xf32>) -> (tensor<2x3xf32>, tensor<1x1x1xf32>) {
  // CHECK: hps.reduce sum %arg0 {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %0 = hps.onnx_node "ReduceSum"(%x) {attrs = {axes = array<i64: 2>, keepdims = 0 : i64}, domain = "", opset = 12 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  // CHECK: hps.reduce sum %arg0 {axes = array<i64>, keepdims} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %1 = hps.onnx_node "ReduceSum"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<1x1x1xf32>
}

// -----

// ReduceSum 13+: axes is an optional constant input; noop_with_empty_axes
// turns an axis-less node into the identity.
// CHECK-LABEL: func @sum_input_axes
func.func @sum_input_axes(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<1x1xf32>, tensor<f32>, tensor<2x3xf32>, tensor<3xf32>) {
  %axes = hps.constant dense<[-1]> : tensor<1xi64>
  %first = hps.constant dense<[0]> : tensor<1xi64>
  %empty = hps.constant dense<> : tensor<0xi64>
  %n = hps.none
  // CHECK: %[[A:.*]] = hps.reduce sum %arg0 {axes = array<i64: -1>, keepdims} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %0 = hps.onnx_node "ReduceSum"(%x, %axes) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %1 = hps.onnx_node "ReduceSum"(%x, %n) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, none) -> tensor<2x3xf32>
  // CHECK: %[[C:.*]] = hps.reduce sum %arg0 {axes = array<i64>, keepdims} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %2 = hps.onnx_node "ReduceSum"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  // An empty axes tensor also means every axis.
  // CHECK: %[[D:.*]] = hps.reduce sum %arg0 {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<f32>
  %3 = hps.onnx_node "ReduceSum"(%x, %empty) {attrs = {keepdims = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<0xi64>) -> tensor<f32>
  %4 = hps.onnx_node "ReduceSum"(%x, %empty) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<0xi64>) -> tensor<2x3xf32>
  // noop_with_empty_axes does nothing when axes are given.
  // CHECK: %[[F:.*]] = hps.reduce sum %arg0 {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %5 = hps.onnx_node "ReduceSum"(%x, %first) {attrs = {noop_with_empty_axes = 1 : i64, keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  // CHECK: return %[[A]], %arg0, %[[C]], %[[D]], %arg0, %[[F]] :
  return %0, %1, %2, %3, %4, %5 : tensor<2x1xf32>, tensor<2x3xf32>, tensor<1x1xf32>, tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
}

// -----

// Stay generic: axes computed at run time, axes out of range or repeated,
// and axes where that version does not take them.
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<2x3xf32>, %dyn: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %axes = hps.constant dense<[1]> : tensor<1xi64>
  // CHECK: hps.onnx_node "ReduceSum"(%arg0, %arg1)
  %0 = hps.onnx_node "ReduceSum"(%x, %dyn) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  // CHECK: hps.onnx_node "ReduceMax"{{.*}}axes = array<i64: 2>
  %1 = hps.onnx_node "ReduceMax"(%x) {attrs = {axes = array<i64: 2>}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.onnx_node "ReduceMean"{{.*}}axes = array<i64: 1, -1>
  %2 = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1, -1>}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK: hps.onnx_node "ReduceMean"(%arg0, %{{.*}})
  %3 = hps.onnx_node "ReduceMean"(%x, %axes) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  // CHECK: hps.onnx_node "ReduceSum"{{.*}}axes = array<i64: 1>
  %4 = hps.onnx_node "ReduceSum"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK-NOT: hps.reduce
  return %0, %1, %2, %3, %4 : tensor<?x?xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// Opset 18: every Reduce* takes axes as an optional constant input, as
// ReduceSum did from 13; none reduces every axis, or with
// noop_with_empty_axes passes the input through.
// CHECK-LABEL: func @reduce_18
func.func @reduce_18(%x: tensor<3x4x5xf32>) -> (tensor<3x1x5xf32>, tensor<4xf32>, tensor<1x1x1xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>) {
  %a = hps.constant dense<[1]> : tensor<1xi64>
  // CHECK: hps.reduce  mean %arg0 {axes = array<i64: 1>, keepdims} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  %0 = hps.onnx_node "ReduceMean"(%x, %a) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x1x5xf32>
  %b = hps.constant dense<[-1, 0]> : tensor<2xi64>
  // CHECK: hps.reduce  log_sum_exp %arg0 {axes = array<i64: -1, 0>} : (tensor<3x4x5xf32>) -> tensor<4xf32>
  %1 = hps.onnx_node "ReduceLogSumExp"(%x, %b) {attrs = {keepdims = 0 : i64}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<4xf32>
  // CHECK: hps.reduce  max %arg0 {axes = array<i64>, keepdims} : (tensor<3x4x5xf32>) -> tensor<1x1x1xf32>
  %2 = hps.onnx_node "ReduceMax"(%x) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>) -> tensor<1x1x1xf32>
  // No axis reduced, each element mapped as the reduction maps it (as
  // onnxruntime does): |x| for L1 and L2, x * x, log x, and x for the
  // others.
  // CHECK-NOT: hps.reduce
  // CHECK-DAG: %[[L2:.*]] = hps.abs %arg0 : tensor<3x4x5xf32>
  // CHECK-DAG: %[[SQUARE:.*]] = hps.mul %arg0, %arg0
  // CHECK-DAG: %[[LOG:.*]] = hps.log %arg0 : tensor<3x4x5xf32>
  // CHECK: return {{.*}}, %[[L2]], %[[SQUARE]], %[[LOG]], %arg0
  %3 = hps.onnx_node "ReduceL2"(%x) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %4 = hps.onnx_node "ReduceSumSquare"(%x) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %5 = hps.onnx_node "ReduceLogSum"(%x) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %6 = hps.onnx_node "ReduceLogSumExp"(%x) {attrs = {noop_with_empty_axes = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3x1x5xf32>, tensor<4xf32>, tensor<1x1x1xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>
}

// -----

// An axes attribute is opset 17's spelling: at 18 the node stays generic.
// CHECK-LABEL: func @reduce_18_axes_attribute
func.func @reduce_18_axes_attribute(%x: tensor<3x4x5xf32>) -> tensor<3x1x5xf32> {
  // CHECK: hps.onnx_node "ReduceMean"
  %0 = hps.onnx_node "ReduceMean"(%x) {attrs = {axes = array<i64: 1>}, domain = "", opset = 18 : i64} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  return %0 : tensor<3x1x5xf32>
}

// -----

// A flatten export's target shape: ReduceProd of the trailing extents,
// read from Shape, folds, so the Reshape becomes static.
// CHECK-LABEL: func @flatten_shape_from_reduce_prod
// CHECK-SAME: -> tensor<2x12xf32>
func.func @flatten_shape_from_reduce_prod(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  // CHECK-NOT: hps.reduce
  // CHECK-NOT: hps.onnx_node
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %start = hps.constant dense<1> : tensor<1xi64>
  %end = hps.constant dense<3> : tensor<1xi64>
  %tail = hps.onnx_node "Slice"(%s, %start, %end) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %p = hps.onnx_node "ReduceProd"(%tail) {attrs = {keepdims = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi64>) -> tensor<1xi64>
  %m = hps.constant dense<-1> : tensor<1xi64>
  %shape = hps.onnx_node "Concat"(%m, %p) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = hps.onnx_node "Reshape"(%x, %shape) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
