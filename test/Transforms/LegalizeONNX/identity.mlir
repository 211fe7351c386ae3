// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Identity (opsets 7-17) is replaced by its input.
// CHECK-LABEL: func @identity
func.func @identity(%x: tensor<4xf32>, %d: tensor<?x4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) {
  %0 = hps.onnx_node "Identity"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = hps.onnx_node "Identity"(%d) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK-NEXT: return %arg0, %arg1
  return %0, %1 : tensor<4xf32>, tensor<?x4xf32>
}

// -----

// A returned result whose type differs from the input stays generic.
// CHECK-LABEL: func @identity_generic
func.func @identity_generic(%x: tensor<4xf32>) -> tensor<?xf32> {
  // CHECK: hps.onnx_node "Identity"
  %0 = hps.onnx_node "Identity"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
