// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// QuantizeLinear then DequantizeLinear with the same zero point: the u8
// round trip folds away and the zero point's add and subtract cancel into
// the clip's bounds: x / s rounded, clipped to [0 - 128, 255 - 128], times s.
// CHECK-LABEL: func @quantize_dequantize
func.func @quantize_dequantize(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: %[[D:.*]] = hps.div %arg0
  // CHECK-NEXT: %[[R:.*]] = hps.round %[[D]]
  // CHECK-NEXT: %[[C:.*]] = hps.clip %[[R]] {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64}
  // CHECK-NEXT: %[[Y:.*]] = hps.mul %[[C]]
  // CHECK-NEXT: return %[[Y]]
  %s = hps.constant dense<0.5> : tensor<f32>
  %z = hps.constant dense<128> : tensor<ui8>
  %q = hps.onnx_node "QuantizeLinear"(%x, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
  %y = hps.onnx_node "DequantizeLinear"(%q, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// A quantized value that is also returned keeps its chain: nothing cancels
// where the clip has another reader.
// CHECK-LABEL: func @quantized_value_returned
func.func @quantized_value_returned(%x: tensor<4xf32>) -> (tensor<4xui8>, tensor<4xf32>) {
  // CHECK: hps.add
  // CHECK: hps.sub
  %s = hps.constant dense<0.5> : tensor<f32>
  %z = hps.constant dense<3> : tensor<ui8>
  %q = hps.onnx_node "QuantizeLinear"(%x, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  %y = hps.onnx_node "DequantizeLinear"(%q, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %q, %y : tensor<4xui8>, tensor<4xf32>
}

// A different zero point on the two sides does not cancel.
// CHECK-LABEL: func @different_zero_points
func.func @different_zero_points(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: hps.add
  // CHECK: hps.sub
  %s = hps.constant dense<0.5> : tensor<f32>
  %z = hps.constant dense<3> : tensor<ui8>
  %z2 = hps.constant dense<4> : tensor<ui8>
  %q = hps.onnx_node "QuantizeLinear"(%x, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  %y = hps.onnx_node "DequantizeLinear"(%q, %s, %z2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
