// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// TopK (1-17) on f32 with a constant k: k rounds, each taking the extreme
// of the positions not yet taken and its first position (ArgMax's
// decomposition), then marking that position taken (-inf for largest).
// CHECK-LABEL: func @topk
func.func @topk(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  %k = hps.constant dense<2> : tensor<1xi64>
  // CHECK-DAG: %[[IOTA:.*]] = hps.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<1x4xf32>
  // CHECK-DAG: %[[NEGINF:.*]] = hps.constant dense<0xFF800000> : tensor<f32>
  // CHECK-DAG: %[[MISS:.*]] = hps.constant dense<4.000000e+00> : tensor<f32>
  // CHECK: %[[V0:.*]] = hps.reduce max %arg0 {axes = array<i64: 1>, keepdims}
  // CHECK: %[[H0:.*]] = hps.equal %arg0, %[[V0]]
  // CHECK: %[[C0:.*]] = hps.where %[[H0]], %[[IOTA]], %[[MISS]]
  // CHECK: %[[I0:.*]] = hps.reduce min %[[C0]] {axes = array<i64: 1>, keepdims}
  // CHECK: %[[T0:.*]] = hps.equal %[[I0]], %[[IOTA]]
  // CHECK: %[[R1:.*]] = hps.where %[[T0]], %[[NEGINF]], %arg0
  // CHECK: %[[V1:.*]] = hps.reduce max %[[R1]]
  // CHECK: %[[E1:.*]] = hps.equal %[[R1]], %[[V1]]
  // CHECK: %[[N1:.*]] = hps.not %[[T0]]
  // CHECK: %[[H1:.*]] = hps.and %[[E1]], %[[N1]]
  // CHECK: %[[C1:.*]] = hps.where %[[H1]], %[[IOTA]], %[[MISS]]
  // CHECK: %[[I1:.*]] = hps.reduce min %[[C1]]
  // CHECK: %[[V:.*]] = hps.concat %[[V0]], %[[V1]] {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  // CHECK: %[[I:.*]] = hps.concat %[[I0]], %[[I1]] {axis = 1 : i64}
  // CHECK: %[[IDX:.*]] = hps.cast %[[I]] : (tensor<2x2xf32>) -> tensor<2x2xi64>
  // CHECK: return %[[V]], %[[IDX]]
  %0:2 = hps.onnx_node "TopK"(%x, %k) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<2x4xf32>, tensor<1xi64>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xi64>
}

// -----

// smallest (largest = 0): reduce min, and taken positions become +inf.
// CHECK-LABEL: func @topk_smallest
func.func @topk_smallest(%x: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  %k = hps.constant dense<2> : tensor<1xi64>
  // CHECK-DAG: hps.constant dense<0x7F800000> : tensor<f32>
  // CHECK: hps.reduce min %arg0 {axes = array<i64: 0>, keepdims}
  %0:2 = hps.onnx_node "TopK"(%x, %k) {attrs = {axis = 0 : i64, largest = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<3x2xf32>, tensor<1xi64>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xi64>
}

// -----

// Stay generic: k from a graph input, an integer input.
// CHECK-LABEL: func @topk_generic
func.func @topk_generic(%x: tensor<2x4xf32>, %k: tensor<1xi64>, %y: tensor<2x4xi32>) -> (tensor<2x?xf32>, tensor<2x?xi64>, tensor<2x1xi32>, tensor<2x1xi64>) {
  %c = hps.constant dense<1> : tensor<1xi64>
  // CHECK-COUNT-2: hps.onnx_node "TopK"
  %0:2 = hps.onnx_node "TopK"(%x, %k) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x4xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  %1:2 = hps.onnx_node "TopK"(%y, %c) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x4xi32>, tensor<1xi64>) -> (tensor<2x1xi32>, tensor<2x1xi64>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<2x?xf32>, tensor<2x?xi64>, tensor<2x1xi32>, tensor<2x1xi64>
}

// -----

// k read from a shape: ONNX declares the selected extent unknown, and the
// results take [.., k, ..] once k folds.
// CHECK-LABEL: func @topk_k_from_shape
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<2x3xi64>)
func.func @topk_k_from_shape(%x: tensor<2x4xf32>, %y: tensor<3xf32>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  // CHECK-NOT: hps.onnx_node
  %k = hps.onnx_node "Shape"(%y) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>) -> tensor<1xi64>
  %0:2 = hps.onnx_node "TopK"(%x, %k) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<2x4xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x?xi64>
}
