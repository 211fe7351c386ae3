// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Inference: Dropout is its input. Opsets 7-11: a ratio attribute, an
// unused mask output.
// CHECK-LABEL: func @dropout_7
func.func @dropout_7(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = hps.onnx_node "Dropout"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1:2 = hps.onnx_node "Dropout"(%x) {attrs = {ratio = 0.5 : f32}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  // CHECK-NEXT: return %arg0, %arg0
  return %0, %1#0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Opset 12+: ratio and training_mode inputs (training_mode absent or a
// constant false), a seed attribute.
// CHECK-LABEL: func @dropout_12
func.func @dropout_12(%x: tensor<4xf32>, %ratio: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = hps.constant dense<0.2> : tensor<f32>
  %f = hps.constant dense<false> : tensor<i1>
  %none = hps.none
  %0 = hps.onnx_node "Dropout"(%x, %r, %f) {attrs = {seed = 3 : i64}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  %1 = hps.onnx_node "Dropout"(%x, %ratio) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = hps.onnx_node "Dropout"(%x, %none, %none) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4xf32>, none, none) -> tensor<4xf32>
  // CHECK: return %arg0, %arg0, %arg0
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// At inference a used mask keeps every element: all true (from opset 10),
// all ones of the data's type before.
// CHECK-LABEL: func @dropout_mask
func.func @dropout_mask(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  // CHECK-DAG: %[[TRUE:.*]] = hps.constant dense<true> : tensor<4xi1>
  // CHECK-DAG: %[[ONES:.*]] = hps.constant dense<1.000000e+00> : tensor<4xf32>
  %0:2 = hps.onnx_node "Dropout"(%x) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %1:2 = hps.onnx_node "Dropout"(%x) {attrs = {ratio = 0.3 : f32}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: return %arg0, %[[TRUE]], %[[ONES]]
  return %0#0, %0#1, %1#1 : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// -----

// Training with a constant ratio of 0 drops nothing: the identity, and a
// mask of all true.
// CHECK-LABEL: func @dropout_training_zero_ratio
func.func @dropout_training_zero_ratio(%x: tensor<4xf32>, %train: tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>) {
  %r = hps.constant dense<0.0> : tensor<f32>
  // CHECK: %[[MASK:.*]] = hps.constant dense<true> : tensor<4xi1>
  // CHECK: return %arg0, %[[MASK]]
  %0:2 = hps.onnx_node "Dropout"(%x, %r, %train) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// Stays generic: training mode (true or unknown) with a ratio above 0, a
// seed before opset 12.
// CHECK-LABEL: func @dropout_generic
func.func @dropout_generic(%x: tensor<4xf32>, %train: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = hps.constant dense<0.2> : tensor<f32>
  %t = hps.constant dense<true> : tensor<i1>
  // CHECK: %[[UNKNOWN:.*]] = hps.onnx_node "Dropout"(%arg0, %{{.*}}, %arg1)
  %1 = hps.onnx_node "Dropout"(%x, %r, %train) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  // CHECK: %[[TRAIN:.*]] = hps.onnx_node "Dropout"(%arg0, %{{.*}}, %{{.*}})
  %2 = hps.onnx_node "Dropout"(%x, %r, %t) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  // CHECK: %[[SEED:.*]] = hps.onnx_node "Dropout"(%arg0) {attrs = {seed = 1 : i64}
  %3 = hps.onnx_node "Dropout"(%x) {attrs = {seed = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[UNKNOWN]], %[[TRAIN]], %[[SEED]]
  return %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Opset 6: the identity only with is_test=1; the default is training.
// CHECK-LABEL: func @dropout_6
func.func @dropout_6(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = hps.onnx_node "Dropout"(%x) {attrs = {is_test = 1 : i64, ratio = 0.5 : f32}, domain = "", opset = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[D:.*]] = hps.onnx_node "Dropout"(%arg0) {attrs = {}
  %1 = hps.onnx_node "Dropout"(%x) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %arg0, %[[D]]
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
