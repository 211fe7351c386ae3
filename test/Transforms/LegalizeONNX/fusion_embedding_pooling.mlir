// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Gather + ReduceSum / ReduceMean over the ids' last axis (EmbeddingBag as
// exporters and CTR models spell it) becomes one pooled lookup; keepdims
// adds a reshape.
// CHECK-LABEL: func @pooled
func.func @pooled(%ids: tensor<4x3xi64>) -> (tensor<4x8xf32>, tensor<4x1x8xf32>) {
  %table = hps.weight "table" dense<0.5> : tensor<100x8xf32>
  %axes = hps.constant dense<[1]> : tensor<1xi64>
  // CHECK: %[[SUM:.*]] = hps.embedding_lookup %{{.*}}, %arg0 {pooling = #hps<embedding_pooling sum>} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  %0 = hps.onnx_node "Gather"(%table, %ids) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %1 = hps.onnx_node "ReduceSum"(%0, %axes) {attrs = {keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<4x3x8xf32>, tensor<1xi64>) -> tensor<4x8xf32>
  // CHECK: %[[MEAN:.*]] = hps.embedding_lookup %{{.*}}, %arg0 {pooling = #hps<embedding_pooling mean>} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  // CHECK: %[[KEPT:.*]] = hps.reshape %[[MEAN]] {shape = array<i64: 4, 1, 8>}
  %2 = hps.onnx_node "Gather"(%table, %ids) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %3 = hps.onnx_node "ReduceMean"(%2) {attrs = {axes = array<i64: -2>, keepdims = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<4x3x8xf32>) -> tensor<4x1x8xf32>
  // CHECK: return %[[SUM]], %[[KEPT]]
  return %1, %3 : tensor<4x8xf32>, tensor<4x1x8xf32>
}

// -----

// Not fused: the rows are read elsewhere too, the reduction is over the
// embedding dim or is a max.
// CHECK-LABEL: func @unpooled
func.func @unpooled(%ids: tensor<4x3xi64>) -> (tensor<4x8xf32>, tensor<4x3x8xf32>, tensor<4x3xf32>, tensor<4x8xf32>) {
  %table = hps.weight "table" dense<0.5> : tensor<100x8xf32>
  %bag = hps.constant dense<[1]> : tensor<1xi64>
  %dim = hps.constant dense<[2]> : tensor<1xi64>
  // CHECK-NOT: embedding_pooling
  // CHECK: hps.reduce  sum
  // CHECK: hps.reduce  sum
  // CHECK: hps.reduce  max
  %0 = hps.onnx_node "Gather"(%table, %ids) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %1 = hps.onnx_node "ReduceSum"(%0, %bag) {attrs = {keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<4x3x8xf32>, tensor<1xi64>) -> tensor<4x8xf32>
  %2 = hps.onnx_node "Gather"(%table, %ids) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %3 = hps.onnx_node "ReduceSum"(%2, %dim) {attrs = {keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<4x3x8xf32>, tensor<1xi64>) -> tensor<4x3xf32>
  %4 = hps.onnx_node "ReduceMax"(%2) {attrs = {axes = array<i64: 1>, keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<4x3x8xf32>) -> tensor<4x8xf32>
  return %1, %0, %3, %4 : tensor<4x8xf32>, tensor<4x3x8xf32>, tensor<4x3xf32>, tensor<4x8xf32>
}
