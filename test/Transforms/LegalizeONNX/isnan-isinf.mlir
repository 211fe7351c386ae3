// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// IsNaN (9-17): not(x == x). IsInf (10-17): equal to +inf and / or -inf as
// detect_positive and detect_negative ask.
// CHECK-LABEL: func @isnan_isinf
func.func @isnan_isinf(%x: tensor<6xf32>) -> (tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>) {
  // CHECK-DAG: %[[PINF:.*]] = hps.constant dense<0x7F800000> : tensor<f32>
  // CHECK-DAG: %[[NINF:.*]] = hps.constant dense<0xFF800000> : tensor<f32>
  // CHECK-DAG: %[[NONE:.*]] = hps.constant dense<false> : tensor<6xi1>
  // CHECK: %[[SAME:.*]] = hps.equal %arg0, %arg0
  // CHECK: %[[NAN:.*]] = hps.not %[[SAME]]
  %0 = hps.onnx_node "IsNaN"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<6xf32>) -> tensor<6xi1>
  // CHECK: %[[N:.*]] = hps.equal %arg0, %[[NINF]]
  // CHECK: %[[P:.*]] = hps.equal %arg0, %[[PINF]]
  // CHECK: %[[INF:.*]] = hps.or %[[P]], %[[N]]
  %1 = hps.onnx_node "IsInf"(%x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<6xf32>) -> tensor<6xi1>
  // CHECK: %[[NEG:.*]] = hps.equal %arg0, %[[NINF]]
  // CHECK: return %[[NAN]], %[[INF]], %[[NEG]], %[[NONE]]
  %2 = hps.onnx_node "IsInf"(%x) {attrs = {detect_positive = 0 : i64}, domain = "", opset = 10 : i64} : (tensor<6xf32>) -> tensor<6xi1>
  %3 = hps.onnx_node "IsInf"(%x) {attrs = {detect_positive = 0 : i64, detect_negative = 0 : i64}, domain = "", opset = 10 : i64} : (tensor<6xf32>) -> tensor<6xi1>
  return %0, %1, %2, %3 : tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xi1>
}
