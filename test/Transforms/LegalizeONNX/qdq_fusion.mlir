// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// A QDQ unit: DequantizeLinear on x, w (per output channel, axis 0) and the
// i32 bias (in units of x_scale * w_scale), a float Conv, QuantizeLinear.
// It runs as the QLinearConv it stands for: one exact conv on the integers
// minus their zero points (the bias added as integers), then the
// requantization by x_scale * w_scale / y_scale. No float conv of the
// dequantized values remains.
// CHECK-LABEL: func @qdq_conv
func.func @qdq_conv(%x: tensor<1x2x3x3xui8>) -> tensor<1x2x2x2xui8> {
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<{{\[\[\[\[}}1.000000e+00, -2.000000e+00], [3.000000e+00, 0.000000e+00]], {{\[\[}}-1.000000e+00, 4.000000e+00], [2.000000e+00, -3.000000e+00]]], {{\[\[\[}}0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00]], {{\[\[}}2.000000e+00, 2.000000e+00], [-1.000000e+00, -1.000000e+00]]]]> : tensor<2x2x2x2xf32>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<[7.000000e+00, -3.000000e+00]> : tensor<2xf32>
  // CHECK: %[[X:.*]] = hps.cast %arg0 : (tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xf32>
  // CHECK: %[[XS:.*]] = hps.sub %[[X]], {{.*}} -> tensor<1x2x3x3xf32>
  // CHECK: %[[ACC:.*]] = hps.conv %[[XS]], %[[W]], %[[B]] {{.*}}exact{{.*}} -> tensor<1x2x2x2xf32>
  // CHECK: hps.mul %[[ACC]], {{.*}} : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>
  // CHECK: hps.round
  // CHECK: hps.clip {{.*}} {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64}
  // CHECK-NOT: hps.conv
  // CHECK-NOT: hps.onnx_node
  %xs = hps.constant dense<5.000000e-01> : tensor<f32>
  %xz = hps.constant dense<3> : tensor<ui8>
  %w = hps.constant dense<[[[[2, -1], [4, 1]], [[0, 5], [3, -2]]], [[[1, 1], [2, 2]], [[3, 3], [0, 0]]]]> : tensor<2x2x2x2xi8>
  %ws = hps.constant dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>
  %wz = hps.constant dense<[1, 1]> : tensor<2xi8>
  %b = hps.constant dense<[7, -3]> : tensor<2xi32>
  %bs = hps.constant dense<[1.250000e-01, 6.250000e-02]> : tensor<2xf32>
  %bz = hps.constant dense<0> : tensor<2xi32>
  %ys = hps.constant dense<2.000000e-01> : tensor<f32>
  %yz = hps.constant dense<10> : tensor<ui8>
  %dx = hps.onnx_node "DequantizeLinear"(%x, %xs, %xz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xf32>
  %dw = hps.onnx_node "DequantizeLinear"(%w, %ws, %wz) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x2x2x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x2x2xf32>
  %db = hps.onnx_node "DequantizeLinear"(%b, %bs, %bz) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = hps.onnx_node "Conv"(%dx, %dw, %db) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y = hps.onnx_node "QuantizeLinear"(%c, %ys, %yz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  return %y : tensor<1x2x2x2xui8>
}

// -----

// Not units, so each node is legalized on its own and the conv reads the
// dequantized floats (it may round as any float conv): a bias in units
// other than x_scale * w_scale; a conv read by more than the
// QuantizeLinear; scales per channel along axis 1 of the filter.
// CHECK-LABEL: func @qdq_not_units
func.func @qdq_not_units(%x: tensor<1x2x3x3xui8>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xui8>) {
  // CHECK-COUNT-3: hps.conv {{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>{{.*}}
  // CHECK-NOT: exact
  // CHECK-NOT: hps.onnx_node
  %xs = hps.constant dense<5.000000e-01> : tensor<f32>
  %xz = hps.constant dense<3> : tensor<ui8>
  %w = hps.constant dense<1> : tensor<2x2x2x2xi8>
  %ws = hps.constant dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>
  %b = hps.constant dense<[7, -3]> : tensor<2xi32>
  %bs = hps.constant dense<[1.250000e-01, 1.250000e-01]> : tensor<2xf32>
  %ys = hps.constant dense<2.000000e-01> : tensor<f32>
  %yz = hps.constant dense<10> : tensor<ui8>
  %dx = hps.onnx_node "DequantizeLinear"(%x, %xs, %xz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xf32>
  %dw = hps.onnx_node "DequantizeLinear"(%w, %ws) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x2x2x2xi8>, tensor<2xf32>) -> tensor<2x2x2x2xf32>
  %db = hps.onnx_node "DequantizeLinear"(%b, %bs) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi32>, tensor<2xf32>) -> tensor<2xf32>
  %c0 = hps.onnx_node "Conv"(%dx, %dw, %db) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y0 = hps.onnx_node "QuantizeLinear"(%c0, %ys, %yz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  %c1 = hps.onnx_node "Conv"(%dx, %dw) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y1 = hps.onnx_node "QuantizeLinear"(%c1, %ys, %yz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  %dw2 = hps.onnx_node "DequantizeLinear"(%w, %ws) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x2x2x2xi8>, tensor<2xf32>) -> tensor<2x2x2x2xf32>
  %c2 = hps.onnx_node "Conv"(%dx, %dw2) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y2 = hps.onnx_node "QuantizeLinear"(%c2, %ys, %yz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  return %y0, %y1, %c1, %y2 : tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xui8>
}
