// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// BitwiseAnd / Or / Xor (18): hps.and / or / xor, bitwise on integers;
// BitwiseNot: all ones minus x, which never overflows.
// CHECK-LABEL: func @bitwise
func.func @bitwise(%a: tensor<3x4xi32>, %b: tensor<4xi32>, %c: tensor<4xui8>) -> (tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<4xi32>, tensor<4xui8>) {
  // CHECK-DAG: %[[MAX:.*]] = hps.constant dense<255> : tensor<ui8>
  // CHECK-DAG: %[[M1:.*]] = hps.constant dense<-1> : tensor<i32>
  // CHECK: hps.and %arg0, %arg1 : tensor<3x4xi32>, tensor<4xi32> -> tensor<3x4xi32>
  %0 = hps.onnx_node "BitwiseAnd"(%a, %b) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  // CHECK: hps.or %arg0, %arg1
  %1 = hps.onnx_node "BitwiseOr"(%a, %b) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  // CHECK: hps.xor %arg0, %arg1
  %2 = hps.onnx_node "BitwiseXor"(%a, %b) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<3x4xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  // CHECK: hps.sub %[[M1]], %arg1 : tensor<i32>, tensor<4xi32> -> tensor<4xi32>
  %3 = hps.onnx_node "BitwiseNot"(%b) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: hps.sub %[[MAX]], %arg2
  %4 = hps.onnx_node "BitwiseNot"(%c) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3, %4 : tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<4xi32>, tensor<4xui8>
}

// -----

// Bool operands are And / Or / Xor's (ONNX's Bitwise ops take integers).
// CHECK-LABEL: func @bitwise_bool
func.func @bitwise_bool(%a: tensor<4xi1>) -> tensor<4xi1> {
  // CHECK: hps.onnx_node "BitwiseAnd"
  %0 = hps.onnx_node "BitwiseAnd"(%a, %a) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
