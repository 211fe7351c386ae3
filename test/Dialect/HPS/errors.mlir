// RUN: heterps-opt %s -split-input-file -verify-diagnostics

func.func @bad_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{device class 'tpu.v4' must start with 'cpu' or 'gpu'}}
  %0 = hps.relu %x {device = #hps.device<"tpu.v4">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gemm_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{inner dimensions differ: 3 vs 4}}
  %0 = hps.gemm %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{C of shape [4] does not broadcast to [2, 5]}}
  %0 = hps.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_result(%a: tensor<7x2x3xf32>, %b: tensor<3x5xf32>) -> tensor<7x2x6xf32> {
  // expected-error @+1 {{result shape [7, 2, 6] does not match the computed shape [7, 2, 5]}}
  %0 = hps.matmul %a, %b : (tensor<7x2x3xf32>, tensor<3x5xf32>) -> tensor<7x2x6xf32>
  return %0 : tensor<7x2x6xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{input has 3 channels but filter expects 2 x group 1}}
  %0 = hps.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{expects 2 strides and dilations and 4 pads for 2 spatial axes}}
  %0 = hps.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_output(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{result shape [1, 4, 8, 8] does not match the computed shape [1, 4, 4, 4]}}
  %0 = hps.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// Operands of one element type, or the quantized form (u8 or i8 input, i8
// filter, i32 bias and result).
func.func @conv_mixed_floats(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{input, filter, bias and result must share an element type unless the input is 8-bit integer}}
  %0 = hps.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// A filter's window that fits nowhere in the padded input: the result was
// empty, and the bundle failed on every run.
func.func @conv_window_too_large(%x: tensor<4x1x2x2xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<4x2x0x0xf32> {
  // expected-error @+1 {{spatial axis 0: the filter's window (3 with dilation) is larger than the padded input (2)}}
  %0 = hps.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<4x1x2x2xf32>, tensor<2x1x3x3xf32>) -> tensor<4x2x0x0xf32>
  return %0 : tensor<4x2x0x0xf32>
}

// -----

// Floating-point operands and result share one element type: the kernels
// read every operand as the result's (an f64 weight was read as f32 bytes).
func.func @matmul_mixed_floats(%x: tensor<8x16xf32>, %w: tensor<16x4xf64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{operands and result must share one element type, not 'f32' and 'f64'}}
  %0 = hps.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf64>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @gemm_mixed_floats(%x: tensor<8x16xf32>, %w: tensor<16x4xf16>) -> tensor<8x4xf32> {
  // expected-error @+1 {{operands and result must share one element type, not 'f32' and 'f16'}}
  %0 = hps.gemm %x, %w : (tensor<8x16xf32>, tensor<16x4xf16>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @batch_norm_mixed_floats(%x: tensor<2x6x4x4xf32>, %s: tensor<6xf32>, %m: tensor<6xf16>) -> tensor<2x6x4x4xf32> {
  // expected-error @+1 {{operands and result must share one element type, not 'f32' and 'f16'}}
  %0 = hps.batch_norm %x, %s, %s, %m, %m : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf16>, tensor<6xf16>) -> tensor<2x6x4x4xf32>
  return %0 : tensor<2x6x4x4xf32>
}

// -----

func.func @layer_norm_mixed_floats(%x: tensor<2x8xf32>, %s: tensor<8xf64>) -> tensor<2x8xf32> {
  // expected-error @+1 {{operands and result must share one element type, not 'f32' and 'f64'}}
  %0 = hps.layer_norm %x, %s : (tensor<2x8xf32>, tensor<8xf64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @conv_grad_input_mixed_floats(%g: tensor<2x6x4x4xf32>, %w: tensor<6x1x3x3xf64>) -> tensor<2x3x8x8xf32> {
  // expected-error @+1 {{operands and result must share one element type, not 'f32' and 'f64'}}
  %dx = hps.conv_grad_input %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x6x4x4xf32>, tensor<6x1x3x3xf64>) -> tensor<2x3x8x8xf32>
  return %dx : tensor<2x3x8x8xf32>
}

// -----

func.func @conv_int8_u8_filter(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xui8>) -> tensor<1x4x6x6xi32> {
  // expected-error @+1 {{with an 8-bit integer input needs an i8 filter and an i32 bias and result, not 'ui8'}}
  %0 = hps.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xui8>) -> tensor<1x4x6x6xi32>
  return %0 : tensor<1x4x6x6xi32>
}

// -----

func.func @conv_int8_i8_result(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>) -> tensor<1x4x6x6xi8> {
  // expected-error @+1 {{with an 8-bit integer input needs an i8 filter and an i32 bias and result}}
  %0 = hps.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<4xi32>) -> tensor<1x4x6x6xi8>
  return %0 : tensor<1x4x6x6xi8>
}

// -----

// The conv adjoints check the forward conv's geometry: the gradient must
// have the shape the conv gives the input (or the result) and the filter.
func.func @conv_grad_input_shape(%g: tensor<1x4x4x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{gradient shape [1, 4, 4, 4] is not the conv result shape [1, 4, 6, 6]}}
  %0 = hps.conv_grad_input %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @conv_grad_filter_group(%x: tensor<1x4x8x8xf32>, %g: tensor<1x6x6x6xf32>) -> tensor<6x4x3x3xf32> {
  // expected-error @+1 {{input has 4 channels but filter expects 4 x group 2}}
  %0 = hps.conv_grad_filter %x, %g {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<1x6x6x6xf32>) -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}

// -----

func.func @pool_ceil(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{result shape [1, 1, 2, 2] does not match the computed shape [1, 1, 3, 3]}}
  %0 = hps.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{operand shapes [4, 3] and [2] do not broadcast}}
  %0 = hps.add %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @compare_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result element type must be i1}}
  %0 = hps.equal %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// and / or / xor: logical on i1, bitwise on integers, nothing on floats.
func.func @logic_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operands must be integer (or i1) tensors}}
  %0 = hps.and %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @element_types(%a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{operands must have the same element type}}
  %0 = hps.mul %a, %b : tensor<4xf32>, tensor<4xi64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unary_shape(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %0 = hps.relu %a : tensor<4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @reduce_axis(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = hps.reduce sum %a {axes = array<i64: 2>} : (tensor<4x3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @concat_dims(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{inputs differ in dimension 0}}
  %0 = hps.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @split_sizes(%a: tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>) {
  // expected-error @+1 {{sizes add up to 5 but the axis has 6}}
  %0:2 = hps.split %a {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>)
  return %0#0, %0#1 : tensor<4x2xf32>, tensor<4x3xf32>
}

// -----

func.func @reshape_count(%a: tensor<4x6xf32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{cannot reshape [4, 6] to [5, 5]}}
  %0 = hps.reshape %a {shape = array<i64: 5, 5>} : (tensor<4x6xf32>) -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

func.func @reshape_two_inferred(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{at most one dimension may be -1}}
  %0 = hps.reshape %a {shape = array<i64: -1, -1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @transpose_perm(%a: tensor<4x6xf32>) -> tensor<6x4xf32> {
  // expected-error @+1 {{perm must be a permutation of the axes}}
  %0 = hps.transpose %a {perm = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

func.func @squeeze_extent(%a: tensor<4x6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{cannot squeeze axis 0 of extent 4}}
  %0 = hps.squeeze %a {axes = array<i64: 0>} : (tensor<4x6xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @gather_indices(%a: tensor<4x6xf32>, %i: tensor<2xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{indices must be an integer tensor}}
  %0 = hps.gather %a, %i : (tensor<4x6xf32>, tensor<2xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @scatter_updates(%a: tensor<4x6xf32>, %i: tensor<2xi64>, %u: tensor<4x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{updates shape [4, 3] does not match the gathered shape [4, 2]}}
  %0 = hps.scatter %a, %i, %u {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @scatter_types(%a: tensor<4x6xf32>, %i: tensor<2xi64>, %u: tensor<2x6xf16>) -> tensor<4x6xf32> {
  // expected-error @+1 {{data, updates and result must have the same element type}}
  %0 = hps.scatter %a, %i, %u : (tensor<4x6xf32>, tensor<2xi64>, tensor<2x6xf16>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @scatter_result(%a: tensor<4x6xf32>, %i: tensor<2xi64>, %u: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{result shape [2, 6] does not match the computed shape [4, 6]}}
  %0 = hps.scatter %a, %i, %u : (tensor<4x6xf32>, tensor<2xi64>, tensor<2x6xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @embedding_table(%t: tensor<4x6x2xf32>, %i: tensor<2xi64>) -> tensor<2x6xf32> {
  // expected-error @+1 {{table has rank 3 but must have rank 2}}
  %0 = hps.embedding_lookup %t, %i : (tensor<4x6x2xf32>, tensor<2xi64>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @embedding_pooled(%t: tensor<100x8xf32>, %i: tensor<4x3xi64>) -> tensor<4x3x8xf32> {
  // expected-error @+1 {{result shape [4, 3, 8] does not match the computed shape [4, 8]}}
  %0 = hps.embedding_lookup %t, %i {pooling = #hps<embedding_pooling sum>} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  return %0 : tensor<4x3x8xf32>
}

// -----

func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{condition must be an i1 tensor}}
  %0 = hps.where %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_count(%a: tensor<4x6xf32>) -> tensor<6x6xf32> {
  // expected-error @+1 {{expects 4 pads for rank 2}}
  %0 = hps.pad %a {pads = array<i64: 1, 1>, mode = #hps<pad_mode constant>, value = 0.0 : f32} : (tensor<4x6xf32>) -> tensor<6x6xf32>
  return %0 : tensor<6x6xf32>
}

// -----

func.func @weight_name() -> tensor<2xf32> {
  // expected-error @+1 {{weight name must not be empty}}
  %0 = hps.weight "" dense<1.0> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @onnx_opset(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{opset must be positive, got 0}}
  %0 = hps.onnx_node "Relu"(%a) {attrs = {}, domain = "", opset = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @batch_norm_stats(%x: tensor<2x3x4x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{scale, bias, mean and variance must be 1-D of the channel count 3}}
  %0 = hps.batch_norm %x, %s, %s, %s, %s : (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

func.func @subgraph_names(%c: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{has 1 region(s) but names 2 subgraph(s)}}
  %0 = hps.onnx_node "If"(%c) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<f32> {
    %1 = hps.constant dense<1.0> : tensor<f32>
    hps.yield %1 : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @yield_outside(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expects parent op 'hps.onnx_node'}}
  hps.yield %x : tensor<f32>
}

// -----

func.func @recurrence_unknown_cell(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{cell 'lru' is none of rnn, gru and lstm}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h {activations = ["Tanh"], cell = "lru"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_activations(%p: tensor<4x2x9xf32>, %r: tensor<9x3xf32>, %rb: tensor<9xf32>, %h: tensor<2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{a gru cell takes 2 activations, got 1}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h {activations = ["Tanh"], cell = "gru"} : (tensor<4x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_activation_name(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{activation "Elu" is none of Sigmoid, Tanh and Relu}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h {activations = ["Elu"], cell = "rnn"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_lstm_needs_c(%p: tensor<4x2x12xf32>, %r: tensor<12x3xf32>, %rb: tensor<12xf32>, %h: tensor<2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{initial_c is there exactly for lstm}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<4x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_peepholes_rnn(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x3xf32>, %q: tensor<9xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{peepholes belong to lstm cells only}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h peepholes %q {activations = ["Tanh"], cell = "rnn"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<9xf32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_shapes(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x4xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{initial_h has type 'tensor<2x4xf32>'; expected 'tensor<2x3xf32>'}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h {activations = ["Tanh"], cell = "rnn"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_lengths_type(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x3xf32>, %lens: tensor<2xi32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{operand #4 must be tensor of 64-bit signless integer values}}
  %y, %hl = hps.recurrence %p, %r, %rb, %h lengths %lens {activations = ["Tanh"], cell = "rnn"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2xi32>) -> (tensor<4x2x3xf32>, tensor<2x3xf32>)
  return %y : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_grad_cell_adjoints(%p: tensor<4x2x12xf32>, %r: tensor<12x3xf32>, %rb: tensor<12xf32>, %h: tensor<2x3xf32>, %y: tensor<4x2x3xf32>) -> tensor<4x2x12xf32> {
  // expected-error @+1 {{a lstm cell has 1 cell adjoints, got 0}}
  %dp, %dr, %drb, %dh = hps.recurrence_grad %p, %r, %rb, %h initial_c %h y %y grad_h_last %h {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<4x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<2x3xf32>) -> (tensor<4x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>)
  return %dp : tensor<4x2x12xf32>
}

// -----

func.func @recurrence_grad_c_last_rnn(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x3xf32>, %y: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{grad_c_last belongs to lstm cells only}}
  %dp, %dr, %drb, %dh = hps.recurrence_grad %p, %r, %rb, %h y %y grad_c_last %h {activations = ["Tanh"], cell = "rnn"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>)
  return %dp : tensor<4x2x3xf32>
}

// -----

func.func @recurrence_grad_shapes(%p: tensor<4x2x3xf32>, %r: tensor<3x3xf32>, %rb: tensor<3xf32>, %h: tensor<2x3xf32>, %y: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @+1 {{grad_y has type 'tensor<2x3xf32>'; expected 'tensor<4x2x3xf32>'}}
  %dp, %dr, %drb, %dh = hps.recurrence_grad %p, %r, %rb, %h y %y grad_y %h {activations = ["Tanh"], cell = "rnn"} : (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>)
  return %dp : tensor<4x2x3xf32>
}

// -----

func.func @non_zero_capacity(%x: tensor<3x4xf32>) -> tensor<2x10xi64> {
  // expected-error @+1 {{result shape [2, 10] does not match the computed shape [2, 12]}}
  %i, %n = hps.non_zero %x : (tensor<3x4xf32>) -> (tensor<2x10xi64>, tensor<i64>)
  return %i : tensor<2x10xi64>
}

// -----

func.func @non_zero_count(%x: tensor<3x4xf32>) -> tensor<2x12xi64> {
  // expected-error @+1 {{count has rank 1 but must have rank 0}}
  %i, %n = hps.non_zero %x : (tensor<3x4xf32>) -> (tensor<2x12xi64>, tensor<1xi64>)
  return %i : tensor<2x12xi64>
}

// -----

func.func @unique_axis(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{axis 2 is not in [0, 2)}}
  %v, %f, %inv, %c, %m = hps.unique %x {axis = 2 : i64} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<i64>)
  return %v : tensor<3x4xf32>
}

// -----

func.func @unique_lists(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{result shape [3] does not match the computed shape [4]}}
  %v, %f, %inv, %c, %m = hps.unique %x {axis = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xi64>, tensor<4xi64>, tensor<4xi64>, tensor<i64>)
  return %v : tensor<3x4xf32>
}

// -----

func.func @nms_scores(%boxes: tensor<2x5x4xf32>, %scores: tensor<2x3x6xf32>) -> tensor<30x3xi64> {
  // expected-error @+1 {{scores must be [batches, classes, boxes] of boxes [batches, boxes, 4]}}
  %s, %k = hps.non_max_suppression %boxes, %scores : (tensor<2x5x4xf32>, tensor<2x3x6xf32>) -> (tensor<30x3xi64>, tensor<i64>)
  return %s : tensor<30x3xi64>
}

// -----

func.func @nms_scalars(%boxes: tensor<2x5x4xf32>, %scores: tensor<2x3x5xf32>, %iou: tensor<2xf32>) -> tensor<30x3xi64> {
  // expected-error @+1 {{max_per_class, iou_threshold and score_threshold must have one element}}
  %s, %k = hps.non_max_suppression %boxes, %scores iou_threshold %iou : (tensor<2x5x4xf32>, tensor<2x3x5xf32>, tensor<2xf32>) -> (tensor<30x3xi64>, tensor<i64>)
  return %s : tensor<30x3xi64>
}

// -----

func.func @determinant_not_square(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{input must end in square matrices}}
  %0 = hps.determinant %x : (tensor<2x3x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @determinant_integer(%x: tensor<3x3xi32>) -> tensor<i32> {
  // expected-error @+1 {{input must be f32 or f64}}
  %0 = hps.determinant %x : (tensor<3x3xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @determinant_shape(%x: tensor<2x3x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result shape [3] does not match the computed shape [2]}}
  %0 = hps.determinant %x : (tensor<2x3x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
