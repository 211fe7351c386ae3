// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Cast (opset 6+ `to` enum): the importer made `to` the result's element
// type, so the cast converts to that.
// CHECK-LABEL: func @cast
func.func @cast(%x: tensor<4xf32>, %d: tensor<?x2xi64>) -> (tensor<4xi64>, tensor<4xf16>, tensor<4xi1>, tensor<?x2xf32>) {
  // CHECK: hps.cast %arg0 : (tensor<4xf32>) -> tensor<4xi64>
  %0 = hps.onnx_node "Cast"(%x) {attrs = {to = 7 : i64}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xi64>
  // CHECK: hps.cast %arg0 : (tensor<4xf32>) -> tensor<4xf16>
  %1 = hps.onnx_node "Cast"(%x) {attrs = {to = 10 : i64}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  // CHECK: hps.cast %arg0 : (tensor<4xf32>) -> tensor<4xi1>
  %2 = hps.onnx_node "Cast"(%x) {attrs = {to = 9 : i64}, domain = "", opset = 17 : i64} : (tensor<4xf32>) -> tensor<4xi1>
  // CHECK: hps.cast %arg1 : (tensor<?x2xi64>) -> tensor<?x2xf32>
  %3 = hps.onnx_node "Cast"(%d) {attrs = {to = 1 : i64}, domain = "", opset = 9 : i64} : (tensor<?x2xi64>) -> tensor<?x2xf32>
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xf16>, tensor<4xi1>, tensor<?x2xf32>
}

// -----

// Constant casts fold (shape arithmetic often casts).
// CHECK-LABEL: func @cast_folds
func.func @cast_folds() -> tensor<2xf32> {
  // CHECK: hps.constant dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-NOT: hps.cast
  %c = hps.constant dense<[3, -1]> : tensor<2xi64>
  %0 = hps.onnx_node "Cast"(%c) {attrs = {to = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CastLike (15+): the importer gave the result the second input's element
// type; only that is read from it.
// CHECK-LABEL: func @cast_like
func.func @cast_like(%x: tensor<4xf32>, %like: tensor<2x2xf16>) -> tensor<4xf16> {
  // CHECK: hps.cast %arg0 : (tensor<4xf32>) -> tensor<4xf16>
  %0 = hps.onnx_node "CastLike"(%x, %like) {attrs = {}, domain = "", opset = 15 : i64} : (tensor<4xf32>, tensor<2x2xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
