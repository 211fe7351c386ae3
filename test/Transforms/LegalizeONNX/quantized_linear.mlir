// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// MatMulInteger: both operands widened to i32 minus their zero points (A's
// per row as [M, 1], B's per column), then one i32 hps.matmul.
// CHECK-LABEL: func @matmul_integer
func.func @matmul_integer(%a: tensor<2x4x3xui8>, %b: tensor<3x5xi8>, %az: tensor<4xui8>, %bz: tensor<5xi8>) -> tensor<2x4x5xi32> {
  // CHECK: %[[A:.*]] = hps.cast %arg0 : (tensor<2x4x3xui8>) -> tensor<2x4x3xi32>
  // CHECK: %[[AZW:.*]] = hps.cast %arg2 : (tensor<4xui8>) -> tensor<4xi32>
  // CHECK: %[[AZ:.*]] = hps.reshape %[[AZW]] {shape = array<i64: 4, 1>}
  // CHECK: %[[AS:.*]] = hps.sub %[[A]], %[[AZ]] : tensor<2x4x3xi32>, tensor<4x1xi32> -> tensor<2x4x3xi32>
  // CHECK: %[[B:.*]] = hps.cast %arg1 : (tensor<3x5xi8>) -> tensor<3x5xi32>
  // CHECK: %[[BZ:.*]] = hps.cast %arg3 : (tensor<5xi8>) -> tensor<5xi32>
  // CHECK: %[[BS:.*]] = hps.sub %[[B]], %[[BZ]] : tensor<3x5xi32>, tensor<5xi32> -> tensor<3x5xi32>
  // CHECK: %[[Y:.*]] = hps.matmul %[[AS]], %[[BS]] : (tensor<2x4x3xi32>, tensor<3x5xi32>) -> tensor<2x4x5xi32>
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "MatMulInteger"(%a, %b, %az, %bz) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<2x4x3xui8>, tensor<3x5xi8>, tensor<4xui8>, tensor<5xi8>) -> tensor<2x4x5xi32>
  return %0 : tensor<2x4x5xi32>
}

// Without zero points only the widening casts remain.
// CHECK-LABEL: func @matmul_integer_no_zero_points
func.func @matmul_integer_no_zero_points(%a: tensor<4x3xi8>, %b: tensor<3x5xi8>) -> tensor<4x5xi32> {
  // CHECK-NOT: hps.sub
  // CHECK: hps.matmul {{.*}} : (tensor<4x3xi32>, tensor<3x5xi32>) -> tensor<4x5xi32>
  %0 = hps.onnx_node "MatMulInteger"(%a, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4x3xi8>, tensor<3x5xi8>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// -----

// A zero point of another type than its operand, or of a length that is
// neither 1 nor the rows, stays generic.
// CHECK-LABEL: func @matmul_integer_bad_zero_points
func.func @matmul_integer_bad_zero_points(%a: tensor<4x3xui8>, %b: tensor<3x5xui8>, %az: tensor<4xi8>, %bz: tensor<3xui8>) -> (tensor<4x5xi32>, tensor<4x5xi32>) {
  // CHECK: hps.onnx_node "MatMulInteger"
  // CHECK: hps.onnx_node "MatMulInteger"
  // CHECK-NOT: hps.matmul
  %0 = hps.onnx_node "MatMulInteger"(%a, %b, %az) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4x3xui8>, tensor<3x5xui8>, tensor<4xi8>) -> tensor<4x5xi32>
  %none = hps.none
  %1 = hps.onnx_node "MatMulInteger"(%a, %b, %none, %bz) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4x3xui8>, tensor<3x5xui8>, none, tensor<3xui8>) -> tensor<4x5xi32>
  return %0, %1 : tensor<4x5xi32>, tensor<4x5xi32>
}

// -----

// ConvInteger: the filter's zero point per output channel as [M, 1, 1, 1];
// the conv itself runs on i32 with the resolved pads.
// CHECK-LABEL: func @conv_integer
func.func @conv_integer(%x: tensor<1x2x5x5xui8>, %w: tensor<3x2x3x3xui8>, %xz: tensor<ui8>, %wz: tensor<3xui8>) -> tensor<1x3x5x5xi32> {
  // CHECK: %[[XS:.*]] = hps.sub {{.*}} : tensor<1x2x5x5xi32>, tensor<i32> -> tensor<1x2x5x5xi32>
  // CHECK: %[[WZ:.*]] = hps.reshape {{.*}} {shape = array<i64: 3, 1, 1, 1>}
  // CHECK: %[[WS:.*]] = hps.sub {{.*}}, %[[WZ]] : tensor<3x2x3x3xi32>, tensor<3x1x1x1xi32> -> tensor<3x2x3x3xi32>
  // CHECK: %[[Y:.*]] = hps.conv %[[XS]], %[[WS]] {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : {{.*}} -> tensor<1x3x5x5xi32>
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "ConvInteger"(%x, %w, %xz, %wz) {attrs = {auto_pad = "SAME_UPPER"}, domain = "", opset = 10 : i64} : (tensor<1x2x5x5xui8>, tensor<3x2x3x3xui8>, tensor<ui8>, tensor<3xui8>) -> tensor<1x3x5x5xi32>
  return %0 : tensor<1x3x5x5xi32>
}

// -----

// QLinearConv: the i32 accumulator (the bias added by the conv) converted
// to f32, times x_scale * w_scale / y_scale computed first (per channel as
// [M, 1, 1]), rounded, plus y's zero point, saturated.
// CHECK-LABEL: func @qlinear_conv
func.func @qlinear_conv(%x: tensor<1x2x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<3x2x1x1xi8>, %ws: tensor<3xf32>, %wz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<ui8>, %b: tensor<3xi32>) -> tensor<1x3x4x4xui8> {
  // CHECK: %[[ACC:.*]] = hps.conv {{.*}}, %arg8 {{.*}} -> tensor<1x3x4x4xi32>
  // CHECK: %[[WS:.*]] = hps.reshape %arg4 {shape = array<i64: 3, 1, 1>}
  // CHECK: %[[XW:.*]] = hps.mul %arg1, %[[WS]] : tensor<f32>, tensor<3x1x1xf32> -> tensor<3x1x1xf32>
  // CHECK: %[[M:.*]] = hps.div %[[XW]], %arg6 : tensor<3x1x1xf32>, tensor<f32> -> tensor<3x1x1xf32>
  // CHECK: %[[F:.*]] = hps.cast %[[ACC]] : (tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xf32>
  // CHECK: %[[S:.*]] = hps.mul %[[F]], %[[M]]
  // CHECK: %[[R:.*]] = hps.round %[[S]]
  // CHECK: %[[A:.*]] = hps.add %[[R]]
  // CHECK: %[[C:.*]] = hps.clip %[[A]] {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64}
  // CHECK: %[[Y:.*]] = hps.cast %[[C]] : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xui8>
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<3xi32>) -> tensor<1x3x4x4xui8>
  return %0 : tensor<1x3x4x4xui8>
}

// A bias of the wrong length, or an output type other than 8 bits, stays
// generic.
// CHECK-LABEL: func @qlinear_conv_refused
func.func @qlinear_conv_refused(%x: tensor<1x2x4x4xui8>, %xs: tensor<f32>, %xz: tensor<ui8>, %w: tensor<3x2x1x1xi8>, %ws: tensor<3xf32>, %wz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<ui8>, %b: tensor<2xi32>) -> tensor<1x3x4x4xui8> {
  // CHECK: hps.onnx_node "QLinearConv"
  // CHECK-NOT: hps.conv
  %0 = hps.onnx_node "QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x3x4x4xui8>
  return %0 : tensor<1x3x4x4xui8>
}

// -----

// QLinearMatMul: B's scale per column ([N]) meets A's per-tensor scale in
// the multiplier.
// CHECK-LABEL: func @qlinear_matmul
func.func @qlinear_matmul(%a: tensor<2x8xi8>, %as: tensor<f32>, %az: tensor<i8>, %b: tensor<8x3xi8>, %bs: tensor<3xf32>, %bz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<i8>) -> tensor<2x3xi8> {
  // CHECK: %[[ACC:.*]] = hps.matmul {{.*}} -> tensor<2x3xi32>
  // CHECK: %[[AB:.*]] = hps.mul %arg1, %arg4 : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  // CHECK: %[[M:.*]] = hps.div %[[AB]], %arg6
  // CHECK: %[[F:.*]] = hps.cast %[[ACC]] : (tensor<2x3xi32>) -> tensor<2x3xf32>
  // CHECK: hps.mul %[[F]], %[[M]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: hps.clip {{.*}} {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64}
  %0 = hps.onnx_node "QLinearMatMul"(%a, %as, %az, %b, %bs, %bz, %ys, %yz) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<2x8xi8>, tensor<f32>, tensor<i8>, tensor<8x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

// A constant filter whose accumulators stay below 2^24 (here at most
// 255 * 3 * 4): the conv runs on f32 with the filter minus its zero point
// folded, exact (`exact`: no kernel may round in between, as Winograd's
// transforms would), then converts to i32.
// CHECK-LABEL: func @conv_integer_exact_f32
func.func @conv_integer_exact_f32(%x: tensor<1x2x3x3xui8>, %xz: tensor<ui8>) -> tensor<1x1x2x2xi32> {
  // CHECK: %[[W:.*]] = hps.constant dense<{{\[\[\[\[}}1.000000e+00, -2.000000e+00], [3.000000e+00, 0.000000e+00]], {{\[\[}}-1.000000e+00, 4.000000e+00], [2.000000e+00, -3.000000e+00]]]]> : tensor<1x2x2x2xf32>
  // CHECK: %[[X:.*]] = hps.cast %arg0 : (tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xf32>
  // CHECK: %[[XS:.*]] = hps.sub %[[X]], {{.*}} -> tensor<1x2x3x3xf32>
  // CHECK: %[[Y:.*]] = hps.conv %[[XS]], %[[W]] {{.*}}exact{{.*}} -> tensor<1x1x2x2xf32>
  // CHECK: hps.cast %[[Y]] : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xi32>
  %w = hps.constant dense<[[[[2, -1], [4, 1]], [[0, 5], [3, -2]]]]> : tensor<1x2x2x2xi8>
  %wz = hps.constant dense<1> : tensor<i8>
  %0 = hps.onnx_node "ConvInteger"(%x, %w, %xz, %wz) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x2x3x3xui8>, tensor<1x2x2x2xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}

// A u8 x with a constant zero point by a constant filter within +-64 of its
// zero point stays integer: one u8 by i8 conv into i32 (the int8 kernels).
// The filter minus its zero point (1) is folded; x's zero point (3) goes
// into the bias as -3 * sum(w - 1) per channel (here -3 * 4), x
// padded with it first since the conv pads.
// CHECK-LABEL: func @conv_integer_int8
func.func @conv_integer_int8(%x: tensor<1x2x3x3xui8>) -> tensor<1x1x3x3xi32> {
  // CHECK-DAG: %[[P:.*]] = hps.pad %arg0 {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, value = 3 : ui8} : (tensor<1x2x3x3xui8>) -> tensor<1x2x4x4xui8>
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<{{\[\[\[\[}}1, -2], [3, 0]], {{\[\[}}-1, 4], [2, -3]]]]> : tensor<1x2x2x2xi8>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<-12> : tensor<1xi32>
  // CHECK: %[[Y:.*]] = hps.conv %[[P]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xui8>, tensor<1x2x2x2xi8>, tensor<1xi32>) -> tensor<1x1x3x3xi32>
  // CHECK-NOT: hps.cast
  // CHECK: return %[[Y]]
  %w = hps.constant dense<[[[[2, -1], [4, 1]], [[0, 5], [3, -2]]]]> : tensor<1x2x2x2xi8>
  %wz = hps.constant dense<1> : tensor<i8>
  %xz = hps.constant dense<3> : tensor<ui8>
  %0 = hps.onnx_node "ConvInteger"(%x, %w, %xz, %wz) {attrs = {pads = array<i64: 0, 0, 1, 1>}, domain = "", opset = 10 : i64} : (tensor<1x2x3x3xui8>, tensor<1x2x2x2xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x1x3x3xi32>
  return %0 : tensor<1x1x3x3xi32>
}

// QLinearConv's int8 form: per-channel filter zero points folded, the bias
// kept as it is (x's zero point is 0), no pad. A filter 65 away from its
// zero point, or an i8 x, keeps the exact f32 conv.
// CHECK-LABEL: func @qlinear_conv_int8
func.func @qlinear_conv_int8(%x: tensor<1x2x4x4xui8>, %s: tensor<f32>, %xi: tensor<1x2x4x4xi8>) -> (tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>) {
  // CHECK-DAG: %[[W:.*]] = hps.constant dense<{{\[\[\[\[}}64]], {{\[\[}}-64]]], {{\[\[\[}}0]], {{\[\[}}3]]]]> : tensor<2x2x1x1xi8>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<[7, -9]> : tensor<2xi32>
  // CHECK: hps.conv %arg0, %[[W]], %[[B]] {{.*}} : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>, tensor<2xi32>) -> tensor<1x2x4x4xi32>
  // CHECK: hps.conv {{.*}}exact{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: hps.conv {{.*}}exact{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %w = hps.constant dense<[[[[64]], [[-64]]], [[[2]], [[5]]]]> : tensor<2x2x1x1xi8>
  %wz = hps.constant dense<[0, 2]> : tensor<2xi8>
  %ws = hps.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %xz = hps.constant dense<0> : tensor<ui8>
  %xzi = hps.constant dense<0> : tensor<i8>
  %b = hps.constant dense<[7, -9]> : tensor<2xi32>
  %far = hps.constant dense<[[[[65]], [[-64]]], [[[2]], [[5]]]]> : tensor<2x2x1x1xi8>
  %0 = hps.onnx_node "QLinearConv"(%x, %s, %xz, %w, %ws, %wz, %s, %xz, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
  %1 = hps.onnx_node "QLinearConv"(%x, %s, %xz, %far, %ws, %wz, %s, %xz, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
  %2 = hps.onnx_node "QLinearConv"(%xi, %s, %xzi, %w, %ws, %wz, %s, %xz, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
  return %0, %1, %2 : tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>
}

// A constant B whose column sums of |b - zero point| (here 4 * 255) times
// max |a - a's zero point| (255) could reach 2^24 only with far more rows:
// f32. With 70000 rows of 1 it could not stay exact: i32.
// CHECK-LABEL: func @matmul_integer_exact_f32
func.func @matmul_integer_exact_f32(%a: tensor<2x4xui8>) -> tensor<2x3xi32> {
  // CHECK: hps.matmul {{.*}} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %b = hps.constant dense<255> : tensor<4x3xui8>
  %0 = hps.onnx_node "MatMulInteger"(%a, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<2x4xui8>, tensor<4x3xui8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
// CHECK-LABEL: func @matmul_integer_too_long_for_f32
func.func @matmul_integer_too_long_for_f32(%a: tensor<2x70000xui8>) -> tensor<2x3xi32> {
  // CHECK: hps.matmul {{.*}} : (tensor<2x70000xi32>, tensor<70000x3xi32>) -> tensor<2x3xi32>
  %b = hps.constant dense<1> : tensor<70000x3xui8>
  %0 = hps.onnx_node "MatMulInteger"(%a, %b) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<2x70000xui8>, tensor<70000x3xui8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
