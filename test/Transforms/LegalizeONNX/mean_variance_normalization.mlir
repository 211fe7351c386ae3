// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// MeanVarianceNormalization (9-17), as ONNX's function body defines it:
// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default 0, 2, 3).
// CHECK-LABEL: func @mvn
func.func @mvn(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) {
  // CHECK: %[[M:.*]] = hps.reduce  mean %arg0 {axes = array<i64: 0, 2, 3>, keepdims} : (tensor<2x3x4x5xf32>) -> tensor<1x3x1x1xf32>
  // CHECK: %[[SQ:.*]] = hps.mul %arg0, %arg0
  // CHECK: %[[MSQ:.*]] = hps.reduce  mean %[[SQ]]
  // CHECK: %[[M2:.*]] = hps.mul %[[M]], %[[M]]
  // CHECK: %[[VAR:.*]] = hps.sub %[[MSQ]], %[[M2]]
  // CHECK: %[[STD:.*]] = hps.sqrt %[[VAR]]
  // CHECK: %[[DEN:.*]] = hps.add %[[STD]], %{{.*}}
  // CHECK: %[[CEN:.*]] = hps.sub %arg0, %[[M]]
  // CHECK: hps.div %[[CEN]], %[[DEN]]
  %0 = hps.onnx_node "MeanVarianceNormalization"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  // CHECK: hps.reduce  mean %arg0 {axes = array<i64: 1, 3>, keepdims} : (tensor<2x3x4x5xf32>) -> tensor<2x1x4x1xf32>
  %1 = hps.onnx_node "MeanVarianceNormalization"(%x) {attrs = {axes = array<i64: -1, 1>}, domain = "", opset = 9 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %0, %1 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
}
