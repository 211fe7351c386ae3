// RUN: heterps-opt --hps-legalize-onnx --split-input-file -verify-diagnostics %s

// A value whose extent stays data-dependent once everything constant has
// folded may not have its shape read, also through ops legalized before
// the check.
func.func @shape_after_cast(%x: tensor<4x3xf32>) -> tensor<2xi64> {
  %nz = hps.onnx_node "NonZero"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4x3xf32>) -> tensor<2x?xi64>
  %f = hps.onnx_node "Cast"(%nz) {attrs = {to = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x?xi64>) -> tensor<2x?xf32>
  // expected-error @+1 {{ONNX 'Shape' reads the extent of a value that depends on the data (from 'NonZero')}}
  %s = hps.onnx_node "Shape"(%f) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x?xf32>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

func.func @size_of_unique(%x: tensor<5xi64>) -> tensor<i64> {
  %u:4 = hps.onnx_node "Unique"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
  // expected-error @+1 {{ONNX 'Size' reads the extent of a value that depends on the data (from 'Unique')}}
  %s = hps.onnx_node "Size"(%u#0) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?xi64>) -> tensor<i64>
  return %s : tensor<i64>
}
