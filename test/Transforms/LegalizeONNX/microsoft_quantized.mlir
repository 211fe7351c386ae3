// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// onnxruntime's com.microsoft QLinearAdd, computed as onnxruntime does:
// each operand shifted by its zero point times its scale over C's, the sum
// shifted by C's zero point and then rounded (ties to even, so the order
// matters), broadcasting as numpy does.
// CHECK-LABEL: func @qlinear_add
func.func @qlinear_add(%a: tensor<2x3xui8>, %as: tensor<f32>, %az: tensor<ui8>, %b: tensor<3xui8>, %bs: tensor<f32>, %bz: tensor<ui8>, %cs: tensor<f32>, %cz: tensor<ui8>) -> tensor<2x3xui8> {
  // CHECK: %[[AR:.*]] = hps.div %arg1, %arg6 : tensor<f32>
  // CHECK: %[[A:.*]] = hps.cast %arg0 : (tensor<2x3xui8>) -> tensor<2x3xf32>
  // CHECK: %[[AZ:.*]] = hps.cast %arg2 : (tensor<ui8>) -> tensor<f32>
  // CHECK: %[[AS:.*]] = hps.sub %[[A]], %[[AZ]]
  // CHECK: %[[AT:.*]] = hps.mul %[[AS]], %[[AR]] : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  // CHECK: %[[BR:.*]] = hps.div %arg4, %arg6 : tensor<f32>
  // CHECK: %[[B:.*]] = hps.cast %arg3 : (tensor<3xui8>) -> tensor<3xf32>
  // CHECK: %[[BT:.*]] = hps.mul {{.*}}, %[[BR]] : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  // CHECK: %[[SUM:.*]] = hps.add %[[AT]], %[[BT]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: %[[CZ:.*]] = hps.cast %arg7
  // CHECK: %[[SHIFTED:.*]] = hps.add %[[SUM]], %[[CZ]]
  // CHECK: hps.round %[[SHIFTED]]
  // CHECK: hps.clip {{.*}} {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64}
  // CHECK: hps.cast {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xui8>
  %0 = hps.onnx_node "QLinearAdd"(%a, %as, %az, %b, %bs, %bz, %cs, %cz) {attrs = {}, domain = "com.microsoft", opset = 1 : i64} : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// QLinearMul on i8 without zero points; QLinearLeakyRelu and QLinearSigmoid
// wrap their float op the same way.
// CHECK-LABEL: func @qlinear_mul_and_unary
func.func @qlinear_mul_and_unary(%a: tensor<4xi8>, %s: tensor<1xf32>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  // CHECK: hps.mul %{{[0-9]+}}, %{{[0-9]+}} : tensor<4xf32>{{$}}
  // CHECK: hps.leaky_relu {{.*}} {alpha = 1.000000e-01 : f32}
  // CHECK: hps.sigmoid
  // CHECK-NOT: hps.onnx_node
  %none = hps.none
  %0 = hps.onnx_node "QLinearMul"(%a, %s, %none, %a, %s, %none, %s, %none) {attrs = {}, domain = "com.microsoft", opset = 1 : i64} : (tensor<4xi8>, tensor<1xf32>, none, tensor<4xi8>, tensor<1xf32>, none, tensor<1xf32>, none) -> tensor<4xi8>
  %1 = hps.onnx_node "QLinearLeakyRelu"(%a, %s, %none, %s, %none) {attrs = {alpha = 1.000000e-01 : f32}, domain = "com.microsoft", opset = 1 : i64} : (tensor<4xi8>, tensor<1xf32>, none, tensor<1xf32>, none) -> tensor<4xi8>
  %2 = hps.onnx_node "QLinearSigmoid"(%a, %s, %none, %s, %none) {attrs = {}, domain = "com.microsoft", opset = 1 : i64} : (tensor<4xi8>, tensor<1xf32>, none, tensor<1xf32>, none) -> tensor<4xi8>
  return %0, %1, %2 : tensor<4xi8>, tensor<4xi8>, tensor<4xi8>
}

// -----

// QLinearGlobalAveragePool (NCHW): the mean of the dequantized values.
// CHECK-LABEL: func @qlinear_global_average_pool
func.func @qlinear_global_average_pool(%x: tensor<2x4x3x3xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<2x4x1x1xui8> {
  // CHECK: %[[P:.*]] = hps.global_avg_pool {{.*}} : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  // CHECK: hps.div %[[P]], %arg1
  %0 = hps.onnx_node "QLinearGlobalAveragePool"(%x, %s, %z, %s, %z) {attrs = {channels_last = 0 : i64}, domain = "com.microsoft", opset = 1 : i64} : (tensor<2x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x1x1xui8>
  return %0 : tensor<2x4x1x1xui8>
}

// -----

// QGemm with transB: a constant B is transposed at compile time (so that the
// exact f32 product still applies), the bias added in i32, and the product
// scaled by b_scale * (a_scale * alpha) per column before y's quantization.
// CHECK-LABEL: func @qgemm
func.func @qgemm(%a: tensor<2x3xui8>, %as: tensor<f32>, %az: tensor<ui8>, %bs: tensor<2xf32>, %bias: tensor<2xi32>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<2x2xui8> {
  // CHECK-DAG: %[[BT:.*]] = hps.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
  // CHECK-DAG: %[[ALPHA:.*]] = hps.constant dense<5.000000e-01> : tensor<f32>
  // CHECK: %[[P:.*]] = hps.matmul {{.*}}, %[[BT]] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // CHECK: %[[ACC:.*]] = hps.cast %[[P]] : (tensor<2x2xf32>) -> tensor<2x2xi32>
  // CHECK: %[[SUM:.*]] = hps.add %[[ACC]], %arg4 : tensor<2x2xi32>, tensor<2xi32> -> tensor<2x2xi32>
  // CHECK: %[[AA:.*]] = hps.mul %arg1, %[[ALPHA]] : tensor<f32>
  // CHECK: %[[M:.*]] = hps.mul %arg3, %[[AA]] : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  // CHECK: %[[MY:.*]] = hps.div %[[M]], %arg5
  // CHECK: %[[F:.*]] = hps.cast %[[SUM]] : (tensor<2x2xi32>) -> tensor<2x2xf32>
  // CHECK: hps.mul %[[F]], %[[MY]] : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
  // CHECK: hps.round
  %b = hps.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>
  %none = hps.none
  %0 = hps.onnx_node "QGemm"(%a, %as, %az, %b, %bs, %none, %bias, %ys, %yz) {attrs = {alpha = 5.000000e-01 : f32, transB = 1 : i64}, domain = "com.microsoft", opset = 1 : i64} : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<2x3xi8>, tensor<2xf32>, none, tensor<2xi32>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8>
  return %0 : tensor<2x2xui8>
}

// -----

// Left generic: per-channel scales (com.microsoft's QLinearAdd takes one),
// channels_last pooling, an op of the default domain spelled the same way.
// CHECK-LABEL: func @kept
func.func @kept(%a: tensor<2x3xui8>, %s3: tensor<3xf32>, %s: tensor<f32>, %z: tensor<ui8>, %x: tensor<2x3x3x4xui8>) -> (tensor<2x3xui8>, tensor<2x1x1x4xui8>, tensor<2x3xui8>) {
  // CHECK: hps.onnx_node "QLinearAdd"
  // CHECK: hps.onnx_node "QLinearGlobalAveragePool"
  // CHECK: hps.onnx_node "QLinearAdd"
  %0 = hps.onnx_node "QLinearAdd"(%a, %s3, %z, %a, %s, %z, %s, %z) {attrs = {}, domain = "com.microsoft", opset = 1 : i64} : (tensor<2x3xui8>, tensor<3xf32>, tensor<ui8>, tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  %1 = hps.onnx_node "QLinearGlobalAveragePool"(%x, %s, %z, %s, %z) {attrs = {channels_last = 1 : i64}, domain = "com.microsoft", opset = 1 : i64} : (tensor<2x3x3x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x1x1x4xui8>
  %2 = hps.onnx_node "QLinearAdd"(%a, %s, %z, %a, %s, %z, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0, %1, %2 : tensor<2x3xui8>, tensor<2x1x1x4xui8>, tensor<2x3xui8>
}
