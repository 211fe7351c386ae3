// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Mod (opset 10+): fmod defaults to 0, the remainder with the divisor's
// sign; fmod=1 takes the dividend's sign (C fmod). Operands broadcast.
// CHECK-LABEL: func @mod
func.func @mod(%a: tensor<2x4xi32>, %b: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<f32>) -> (tensor<2x4xi32>, tensor<2x4xi32>, tensor<4xf32>) {
  // CHECK: hps.mod %arg0, %arg1 : tensor<2x4xi32>, tensor<4xi32> -> tensor<2x4xi32>
  %0 = hps.onnx_node "Mod"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  // CHECK: hps.mod %arg0, %arg1 {fmod} : tensor<2x4xi32>, tensor<4xi32> -> tensor<2x4xi32>
  %1 = hps.onnx_node "Mod"(%a, %b) {attrs = {fmod = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  // CHECK: hps.mod %arg2, %arg3 {fmod} : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %2 = hps.onnx_node "Mod"(%x, %y) {attrs = {fmod = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<2x4xi32>, tensor<2x4xi32>, tensor<4xf32>
}

// -----

// Mod first appears in opset 10.
// CHECK-LABEL: func @opset9
func.func @opset9(%a: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: hps.onnx_node "Mod"
  %0 = hps.onnx_node "Mod"(%a, %a) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
