// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Hardmax on f32: 1 at the first position of the maximum (ArgMax's
// decomposition, then equal with the iota), 0 elsewhere. From opset 13
// along `axis` (default -1); before 13 over the input coerced to 2-D at
// `axis` (default 1).
// CHECK-LABEL: func @hardmax
func.func @hardmax(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK-DAG: %[[IOTA:.*]] = hps.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]]]> : tensor<1x1x4xf32>
  // CHECK-DAG: %[[ONE:.*]] = hps.constant dense<1.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0.000000e+00> : tensor<f32>
  // CHECK: %[[M:.*]] = hps.reduce max %arg0 {axes = array<i64: 2>, keepdims}
  // CHECK: %[[H:.*]] = hps.equal %arg0, %[[M]]
  // CHECK: %[[C:.*]] = hps.where %[[H]], %[[IOTA]]
  // CHECK: %[[F:.*]] = hps.reduce min %[[C]] {axes = array<i64: 2>, keepdims}
  // CHECK: %[[E:.*]] = hps.equal %[[F]], %[[IOTA]]
  // CHECK: %[[A:.*]] = hps.where %[[E]], %[[ONE]], %[[ZERO]] : (tensor<2x3x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Hardmax"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: %[[V:.*]] = hps.reshape %arg0 {shape = array<i64: 2, 12>}
  // CHECK: hps.reduce max %[[V]] {axes = array<i64: 1>, keepdims}
  // CHECK: %[[W:.*]] = hps.where {{.*}} : (tensor<2x12xi1>, tensor<f32>, tensor<f32>) -> tensor<2x12xf32>
  // CHECK: %[[B:.*]] = hps.reshape %[[W]] {shape = array<i64: 2, 3, 4>}
  // CHECK: return %[[A]], %[[B]]
  %1 = hps.onnx_node "Hardmax"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// Stays generic: a dynamic shape.
// CHECK-LABEL: func @hardmax_generic
func.func @hardmax_generic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK: hps.onnx_node "Hardmax"
  %0 = hps.onnx_node "Hardmax"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
