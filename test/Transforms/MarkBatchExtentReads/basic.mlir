// RUN: heterps-opt --hps-mark-batch-extent-reads --split-input-file %s | FileCheck %s

// The batch's extent times the samples: a call of 6 samples at batch 4
// would multiply by 4, so the output is marked. The same extent as a
// Reshape target shapes each micro-batch rightly: no mark.
// CHECK-LABEL: func.func @scale_by_batch
// CHECK-SAME: -> (tensor<4x3xf32> {hps.batched, hps.mixes_samples = "'Mul' (node 'scale') computes with the batch's extent that 'Shape' (node 'shape') reads"}, tensor<4x3xf32> {hps.batched})
func.func @scale_by_batch(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched}) attributes {hps.batch = 4 : i64} {
  %zero = hps.constant dense<0> : tensor<i64>
  %axes = hps.constant dense<0> : tensor<1xi64>
  %rest = hps.constant dense<-1> : tensor<1xi64>
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>) -> tensor<2xi64> loc("shape")
  %n = hps.onnx_node "Gather"(%shape, %zero) {attrs = {axis = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %nf = hps.onnx_node "Cast"(%n) {attrs = {to = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<i64>) -> tensor<f32>
  %y = hps.onnx_node "Mul"(%x, %nf) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32> loc("scale")
  %n1 = hps.onnx_node "Unsqueeze"(%n, %axes) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %target = hps.onnx_node "Concat"(%n1, %rest) {attrs = {axis = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %z = hps.onnx_node "Reshape"(%x, %target) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %y, %z : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Attention's scale by the feature extent (an ONNX Constant index, not yet
// legalized) reads no batch: no mark.
// CHECK-LABEL: func.func @scale_by_features
// CHECK-NOT: hps.mixes_samples
func.func @scale_by_features(%x: tensor<4x8xf32> {hps.batched}) -> (tensor<4x8xf32> {hps.batched}) attributes {hps.batch = 4 : i64} {
  %last = hps.onnx_node "Constant"() {attrs = {value = dense<-1> : tensor<i64>}, domain = "", opset = 17 : i64} : () -> tensor<i64>
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x8xf32>) -> tensor<2xi64>
  %d = hps.onnx_node "Gather"(%shape, %last) {attrs = {axis = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %df = hps.onnx_node "Cast"(%d) {attrs = {to = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<i64>) -> tensor<f32>
  %s = hps.onnx_node "Sqrt"(%df) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<f32>) -> tensor<f32>
  %y = hps.onnx_node "Div"(%x, %s) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Shape from `start` 1 (opset 15) holds no batch; Size holds it, and so
// does an output that is the batch's extent.
// CHECK-LABEL: func.func @size_and_shape
// CHECK-SAME: -> (tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched, hps.mixes_samples = "'Mul' computes with the batch's extent that 'Size' reads"}, tensor<2xi64> {hps.mixes_samples = "it is the batch's extent that 'Shape' reads"})
func.func @size_and_shape(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched}, tensor<2xi64>) attributes {hps.batch = 4 : i64} {
  %features = hps.onnx_node "Shape"(%x) {attrs = {start = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<4x3xf32>) -> tensor<1xi64>
  %ff = hps.onnx_node "Cast"(%features) {attrs = {to = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<1xi64>) -> tensor<1xf32>
  %a = hps.onnx_node "Mul"(%x, %ff) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4x3xf32>, tensor<1xf32>) -> tensor<4x3xf32>
  %size = hps.onnx_node "Size"(%x) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4x3xf32>) -> tensor<i64>
  %sf = hps.onnx_node "Cast"(%size) {attrs = {to = 1 : i64}, domain = "", opset = 18 : i64} : (tensor<i64>) -> tensor<f32>
  %b = hps.onnx_node "Mul"(%x, %sf) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4x3xf32>) -> tensor<2xi64>
  return %a, %b, %shape : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2xi64>
}

// -----

// Slice bounds and a ConstantOfShape of the batch's extent only shape
// their results; a Range over it is data, and the mark follows what reads
// it to the output.
// CHECK-LABEL: func.func @shapes_and_range
// CHECK-SAME: -> (tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched, hps.mixes_samples = "'Range' computes with the batch's extent that 'Shape' reads"})
func.func @shapes_and_range(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched}) attributes {hps.batch = 4 : i64} {
  %rows = hps.constant dense<1.0> : tensor<16x3xf32>
  %zero = hps.constant dense<0> : tensor<1xi64>
  %zero0 = hps.constant dense<0> : tensor<i64>
  %one = hps.constant dense<1> : tensor<i64>
  %col = hps.constant dense<[1]> : tensor<1xi64>
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>) -> tensor<2xi64>
  %n = hps.onnx_node "Slice"(%shape, %zero, %col) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %taken = hps.onnx_node "Slice"(%rows, %zero, %n) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<16x3xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x3xf32>
  %a = hps.onnx_node "Add"(%x, %taken) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %zeros = hps.onnx_node "ConstantOfShape"(%shape) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2xi64>) -> tensor<4x3xf32>
  %b = hps.onnx_node "Add"(%x, %zeros) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %count = hps.onnx_node "Gather"(%shape, %zero0) {attrs = {axis = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %range = hps.onnx_node "Range"(%zero0, %count, %one) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %rf = hps.onnx_node "Cast"(%range) {attrs = {to = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<4xi64>) -> tensor<4xf32>
  %r2 = hps.onnx_node "Unsqueeze"(%rf, %col) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c = hps.onnx_node "Add"(%x, %r2) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %a, %b, %c : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Without a bound batch there is nothing to mark.
// CHECK-LABEL: func.func @unbound
// CHECK-NOT: hps.mixes_samples
func.func @unbound(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<2xi64>) {
  %shape = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<4x3xf32>) -> tensor<2xi64>
  return %shape : tensor<2xi64>
}
