// RUN: heterps-opt --hps-legalize-onnx=strict --split-input-file -verify-diagnostics %s

// A node no pattern takes is named with what its pattern said, here the
// hps op's verifier: the filter's channels times the group must be the
// input's.
func.func @conv_group_mismatch(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{no legalization for ONNX op 'Conv' (domain '', opset 13): input has 4 channels but filter expects 3 x group 2}}
  %0 = hps.onnx_node "Conv"(%x, %w) {attrs = {group = 2 : i64}, domain = "", opset = 13 : i64} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// A pattern's own refusal.
func.func @dropout_training(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{no legalization for ONNX op 'Dropout' (domain '', opset 6): training mode (is_test=0)}}
  %0 = hps.onnx_node "Dropout"(%x) {attrs = {is_test = 0 : i64}, domain = "", opset = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tile: the reason is the zero repeat, not "not constant".
func.func @tile_zero_repeat(%x: tensor<2x3xf32>) -> tensor<0x3xf32> {
  %z = hps.constant dense<[0, 1]> : tensor<2xi64>
  // expected-error @+1 {{no legalization for ONNX op 'Tile' (domain '', opset 13): a repeat below 1 (an empty result) is not supported}}
  %0 = hps.onnx_node "Tile"(%x, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

// Constant Gather indices out of range: refused at compile time (the
// bundle compiled, and every run failed on the index).
func.func @gather_index_out_of_range(%x: tensor<4x4xf32>) -> tensor<4x2xf32> {
  %i = hps.constant dense<[1, 7]> : tensor<2xi64>
  // expected-error @+1 {{no legalization for ONNX op 'Gather' (domain '', opset 13): index 7 is out of range [-4, 4) of axis 1}}
  %0 = hps.onnx_node "Gather"(%x, %i) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
