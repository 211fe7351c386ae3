// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// EyeLike (9-17) and the window functions of opset 17 (constant size) fold
// to constants.
// CHECK-LABEL: func @generators
func.func @generators(%x: tensor<3x4xf32>) -> (tensor<3x4xi32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<?xf32>) {
  // CHECK-DAG: hps.constant dense<{{\[\[}}0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]> : tensor<3x4xi32>
  %0 = hps.onnx_node "EyeLike"(%x) {attrs = {dtype = 6 : i64, k = 1 : i64}, domain = "", opset = 9 : i64} : (tensor<3x4xf32>) -> tensor<3x4xi32>
  // CHECK-DAG: hps.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x4xf32>
  %1 = hps.onnx_node "EyeLike"(%x) {attrs = {k = -1 : i64}, domain = "", opset = 9 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %four = hps.constant dense<4> : tensor<i64>
  %five = hps.constant dense<5> : tensor<i64>
  // Periodic Hann of 4: 0.5 - 0.5 cos(2 pi n / 4).
  // CHECK-DAG: hps.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01]> : tensor<4xf32>
  %2 = hps.onnx_node "HannWindow"(%four) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>) -> tensor<4xf32>
  // Symmetric Hamming of 4 ends at 25/46 - 21/46 = 2/23.
  // CHECK-DAG: hps.constant dense<[0.0869565{{[0-9]*}}, 0.77{{[0-9]*}}, 0.77{{[0-9]*}}, 0.0869565{{[0-9]*}}]> : tensor<4xf32>
  %3 = hps.onnx_node "HammingWindow"(%four) {attrs = {periodic = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<i64>) -> tensor<4xf32>
  // CHECK-DAG: hps.constant dense<[{{.*}}]> : tensor<5xf32>
  %4 = hps.onnx_node "BlackmanWindow"(%five) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>) -> tensor<5xf32>
  // A size known only at run time stays generic.
  // CHECK: hps.onnx_node "HannWindow"(%{{.*}})
  %n = hps.onnx_node "Size"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<3x4xf32>) -> tensor<i64>
  %d = hps.onnx_node "Abs"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %dn = hps.onnx_node "ReduceMax"(%d) {attrs = {keepdims = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<3x4xf32>) -> tensor<f32>
  %di = hps.onnx_node "Cast"(%dn) {attrs = {to = 7 : i64}, domain = "", opset = 17 : i64} : (tensor<f32>) -> tensor<i64>
  %5 = hps.onnx_node "HannWindow"(%di) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>) -> tensor<?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3x4xi32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<?xf32>
}
