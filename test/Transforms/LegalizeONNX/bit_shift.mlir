// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// BitShift on unsigned integers: 2^y looked up in a constant table by y
// clamped to [0, bits]; LEFT multiplies (the table's last entry, 0, for a
// shift by the width or more), RIGHT divides and then gives 0 where y is
// at least the width.
// CHECK-LABEL: func @bit_shift_right
func.func @bit_shift_right(%x: tensor<2x3xui8>, %y: tensor<3xui8>) -> tensor<2x3xui8> {
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0> : tensor<ui8>
  // CHECK-DAG: %[[WIDTH:.*]] = hps.constant dense<8> : tensor<ui8>
  // CHECK-DAG: %[[POWERS:.*]] = hps.constant dense<[1, 2, 4, 8, 16, 32, 64, 128, 1]> : tensor<9xui8>
  // CHECK: %[[CLAMPED:.*]] = hps.clip %arg1 {max = 8.000000e+00 : f64, min = 0.000000e+00 : f64}
  // CHECK: %[[AT:.*]] = hps.cast %[[CLAMPED]] : (tensor<3xui8>) -> tensor<3xi64>
  // CHECK: %[[FACTORS:.*]] = hps.gather %[[POWERS]], %[[AT]]
  // CHECK: %[[QUOTIENT:.*]] = hps.div %arg0, %[[FACTORS]] : tensor<2x3xui8>, tensor<3xui8> -> tensor<2x3xui8>
  // CHECK: %[[WIDE:.*]] = hps.greater_equal %arg1, %[[WIDTH]]
  // CHECK: %[[Z:.*]] = hps.where %[[WIDE]], %[[ZERO]], %[[QUOTIENT]]
  // CHECK: return %[[Z]]
  %0 = hps.onnx_node "BitShift"(%x, %y) {attrs = {direction = "RIGHT"}, domain = "", opset = 11 : i64} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// CHECK-LABEL: func @bit_shift_left
func.func @bit_shift_left(%x: tensor<4xui64>, %y: tensor<4xui64>) -> tensor<4xui64> {
  // CHECK: hps.constant dense<[1, 2, 4, {{.*}}, 9223372036854775808, 0]> : tensor<65xui64>
  // CHECK: %[[FACTORS:.*]] = hps.gather
  // CHECK: %[[Z:.*]] = hps.mul %arg0, %[[FACTORS]]
  // CHECK: return %[[Z]]
  %0 = hps.onnx_node "BitShift"(%x, %y) {attrs = {direction = "LEFT"}, domain = "", opset = 11 : i64} : (tensor<4xui64>, tensor<4xui64>) -> tensor<4xui64>
  return %0 : tensor<4xui64>
}

// -----

// Stay generic: signed operands, an unknown direction.
// CHECK-LABEL: func @bit_shift_generic
func.func @bit_shift_generic(%x: tensor<4xi32>, %u: tensor<4xui32>) -> (tensor<4xi32>, tensor<4xui32>) {
  // CHECK-COUNT-2: hps.onnx_node "BitShift"
  %0 = hps.onnx_node "BitShift"(%x, %x) {attrs = {direction = "LEFT"}, domain = "", opset = 11 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = hps.onnx_node "BitShift"(%u, %u) {attrs = {direction = "UP"}, domain = "", opset = 11 : i64} : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  return %0, %1 : tensor<4xi32>, tensor<4xui32>
}
