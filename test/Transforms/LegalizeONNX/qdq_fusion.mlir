// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// A QDQ unit: DequantizeLinear on x, w (per output channel, axis 0) and the
// i32 bias (in units of x_scale * w_scale), a float Conv, QuantizeLinear.
// It runs as the QLinearConv it stands for: one u8 by i8 conv into i32 with
// the filter minus its zero points and x's zero point folded into the bias
// (7 - 3 * 4 and -3 - 3 * 4, 4 being each channel's sum of w - 1), then the
// requantization by x_scale * w_scale / y_scale. No float conv of the
// dequantized values remains.
// CHECK-LABEL: func @qdq_conv
func.func @qdq_conv(%x: tensor<1x2x3x3xui8>) -> tensor<1x2x2x2xui8> {
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<{{\[\[\[\[}}1, -2], [3, 0]], {{\[\[}}-1, 4], [2, -3]]], {{\[\[\[}}0, 0], [1, 1]], {{\[\[}}2, 2], [-1, -1]]]]> : tensor<2x2x2x2xi8>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<[-5, -15]> : tensor<2xi32>
  // CHECK: %[[ACC:.*]] = hps.conv %arg0, %[[W]], %[[B]] {{.*}} : (tensor<1x2x3x3xui8>, tensor<2x2x2x2xi8>, tensor<2xi32>) -> tensor<1x2x2x2xi32>
  // CHECK: %[[F:.*]] = hps.cast %[[ACC]] : (tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xf32>
  // CHECK: hps.mul %[[F]], {{.*}} : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>
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

// -----

// A residual add between DequantizeLinear and QuantizeLinear, with a Relu
// that the zero point at the type's least value makes redundant: the
// com.microsoft QLinearAdd it stands for, each shifted operand times its
// scale over c_scale (0.5 / 0.3 and 0.25 / 0.3: onnxruntime's rounding),
// no hps.relu.
// CHECK-LABEL: func @qdq_add_relu
func.func @qdq_add_relu(%a: tensor<1x4xui8>, %b: tensor<1x4xui8>) -> tensor<1x4xui8> {
  // CHECK-DAG: %[[RA:.*]] = hps.constant dense<1.66666663> : tensor<f32>
  // CHECK-DAG: %[[RB:.*]] = hps.constant dense<0.833333313> : tensor<f32>
  // CHECK: %[[A:.*]] = hps.mul %{{.*}}, %[[RA]] : tensor<1x4xf32>, tensor<f32>
  // CHECK: %[[B:.*]] = hps.mul %{{.*}}, %[[RB]] : tensor<1x4xf32>, tensor<f32>
  // CHECK: hps.add %[[A]], %[[B]]
  // CHECK-NOT: hps.relu
  // CHECK: hps.round
  %as = hps.constant dense<5.000000e-01> : tensor<f32>
  %az = hps.constant dense<3> : tensor<ui8>
  %bs = hps.constant dense<2.500000e-01> : tensor<f32>
  %cs = hps.constant dense<3.000000e-01> : tensor<f32>
  %cz = hps.constant dense<0> : tensor<ui8>
  %da = hps.onnx_node "DequantizeLinear"(%a, %as, %az) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xf32>
  %db = hps.onnx_node "DequantizeLinear"(%b, %bs) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xui8>, tensor<f32>) -> tensor<1x4xf32>
  %s = hps.onnx_node "Add"(%da, %db) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = hps.onnx_node "Relu"(%s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = hps.onnx_node "QuantizeLinear"(%r, %cs, %cz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  return %y : tensor<1x4xui8>
}

// A Relu before a QuantizeLinear whose zero point is above the least value
// clips what the quantization would not: it stays, and so does the float
// add.
// CHECK-LABEL: func @qdq_relu_kept
func.func @qdq_relu_kept(%a: tensor<1x4xui8>, %b: tensor<1x4xui8>) -> tensor<1x4xui8> {
  // CHECK: hps.add
  // CHECK: hps.relu
  // CHECK: hps.div
  %as = hps.constant dense<5.000000e-01> : tensor<f32>
  %cs = hps.constant dense<3.000000e-01> : tensor<f32>
  %cz = hps.constant dense<4> : tensor<ui8>
  %da = hps.onnx_node "DequantizeLinear"(%a, %as) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xui8>, tensor<f32>) -> tensor<1x4xf32>
  %db = hps.onnx_node "DequantizeLinear"(%b, %as) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xui8>, tensor<f32>) -> tensor<1x4xf32>
  %s = hps.onnx_node "Add"(%da, %db) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = hps.onnx_node "Relu"(%s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = hps.onnx_node "QuantizeLinear"(%r, %cs, %cz) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<1x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  return %y : tensor<1x4xui8>
}

// -----

// A classifier Gemm (transB, B per output column along axis 0, an i32 bias
// in units of a_scale * b_scale) between DequantizeLinear and
// QuantizeLinear: com.microsoft QGemm's exact product, the bias added in
// i32, then the requantization.
// CHECK-LABEL: func @qdq_gemm
func.func @qdq_gemm(%a: tensor<2x3xui8>) -> tensor<2x2xui8> {
  // CHECK: %[[P:.*]] = hps.matmul {{.*}} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // CHECK: %[[I:.*]] = hps.cast %[[P]] : (tensor<2x2xf32>) -> tensor<2x2xi32>
  // CHECK: hps.add %[[I]], %{{.*}} : tensor<2x2xi32>, tensor<2xi32>
  // CHECK: hps.round
  // CHECK-NOT: hps.onnx_node
  %as = hps.constant dense<5.000000e-01> : tensor<f32>
  %b = hps.constant dense<[[1, -2, 3], [4, 0, -1]]> : tensor<2x3xi8>
  %bs = hps.constant dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>
  %c = hps.constant dense<[5, -7]> : tensor<2xi32>
  %cs = hps.constant dense<[1.250000e-01, 6.250000e-02]> : tensor<2xf32>
  %ys = hps.constant dense<2.000000e-01> : tensor<f32>
  %da = hps.onnx_node "DequantizeLinear"(%a, %as) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xui8>, tensor<f32>) -> tensor<2x3xf32>
  %db = hps.onnx_node "DequantizeLinear"(%b, %bs) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
  %dc = hps.onnx_node "DequantizeLinear"(%c, %cs) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi32>, tensor<2xf32>) -> tensor<2xf32>
  %g = hps.onnx_node "Gemm"(%da, %db, %dc) {attrs = {transB = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %y = hps.onnx_node "QuantizeLinear"(%g, %ys) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xui8>
  return %y : tensor<2x2xui8>
}
