// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Gather on a 2-D weight along axis 0 with integer ids is a sparse
// embedding lookup (the parameter server's table).
// CHECK-LABEL: func @embedding
func.func @embedding(%ids: tensor<4x3xi64>, %j: tensor<?xi32>) -> (tensor<4x3x8xf32>, tensor<?x8xf32>) {
  %table = hps.weight "table" dense<0.5> : tensor<100x8xf32>
  // CHECK: hps.embedding_lookup %{{.*}}, %arg0 : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  %0 = hps.onnx_node "Gather"(%table, %ids) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  // CHECK: hps.embedding_lookup %{{.*}}, %arg1 : (tensor<100x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %1 = hps.onnx_node "Gather"(%table, %j) {attrs = {axis = -2 : i64}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return %0, %1 : tensor<4x3x8xf32>, tensor<?x8xf32>
}

// -----

// Any other gather is dense: another axis, activations, a 3-D weight.
// CHECK-LABEL: func @dense
func.func @dense(%x: tensor<5x6xf32>, %j: tensor<2xi32>, %k: tensor<i64>) -> (tensor<5x2xf32>, tensor<2x6xf32>, tensor<4x3xf32>, tensor<6xf32>) {
  %table = hps.weight "table" dense<0.5> : tensor<100x8xf32>
  %cube = hps.weight "cube" dense<0.5> : tensor<2x4x3xf32>
  // CHECK: hps.gather %arg0, %arg1 {axis = 1 : i64} : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<5x2xf32>
  %0 = hps.onnx_node "Gather"(%x, %j) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<5x2xf32>
  // CHECK: hps.gather %arg0, %arg1 : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<2x6xf32>
  %1 = hps.onnx_node "Gather"(%x, %j) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<5x6xf32>, tensor<2xi32>) -> tensor<2x6xf32>
  // CHECK: hps.gather %{{.*}}, %arg2 : (tensor<2x4x3xf32>, tensor<i64>) -> tensor<4x3xf32>
  %2 = hps.onnx_node "Gather"(%cube, %k) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x4x3xf32>, tensor<i64>) -> tensor<4x3xf32>
  // CHECK: hps.gather %arg0, %arg2 : (tensor<5x6xf32>, tensor<i64>) -> tensor<6xf32>
  %3 = hps.onnx_node "Gather"(%x, %k) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<5x6xf32>, tensor<i64>) -> tensor<6xf32>
  return %0, %1, %2, %3 : tensor<5x2xf32>, tensor<2x6xf32>, tensor<4x3xf32>, tensor<6xf32>
}

// -----

// Opset 11+: negative indices count from the end; on constants it folds.
// CHECK-LABEL: func @fold
func.func @fold() -> tensor<2xi64> {
  %c = hps.constant dense<[10, 20, 30]> : tensor<3xi64>
  %i = hps.constant dense<[-1, 0]> : tensor<2xi64>
  // CHECK: %[[C:.*]] = hps.constant dense<[30, 10]> : tensor<2xi64>
  // CHECK-NEXT: return %[[C]]
  %0 = hps.onnx_node "Gather"(%c, %i) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Stays generic: float indices, an axis out of range.
// CHECK-LABEL: func @gather_generic
func.func @gather_generic(%f: tensor<2xf32>, %x: tensor<5x6xf32>, %j: tensor<2xi64>) -> (tensor<2x8xf32>, tensor<5x2xf32>) {
  %table = hps.weight "table" dense<0.5> : tensor<100x8xf32>
  // CHECK: hps.onnx_node "Gather"(%{{.*}}, %arg0)
  %0 = hps.onnx_node "Gather"(%table, %f) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<100x8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  // CHECK: hps.onnx_node "Gather"(%arg1, %arg2) {attrs = {axis = 2 : i64}
  %1 = hps.onnx_node "Gather"(%x, %j) {attrs = {axis = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<5x6xf32>, tensor<2xi64>) -> tensor<5x2xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<5x2xf32>
}
