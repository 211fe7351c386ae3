// RUN: heterps-opt %s -split-input-file -verify-diagnostics

func.func @not_dense(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{must start with hps.gemm, hps.matmul or hps.conv, not hps.neg}}
  %y = hpsrt.fused_dense -> tensor<8xf32> {
    %n = hps.neg %x : tensor<8xf32>
    hpsrt.yield %n : tensor<8xf32>
  }
  return %y : tensor<8xf32>
}

// -----

func.func @residual_into_gemm(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %r: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{fuses a residual add into a conv only}}
  %y = hpsrt.fused_dense -> tensor<4x3xf32> {
    %g = hps.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %s = hps.add %g, %r : tensor<4x3xf32>
    hpsrt.yield %s : tensor<4x3xf32>
  }
  return %y : tensor<4x3xf32>
}

// -----

// The conv kernel reads its residual in y's shape, stored before it runs.
func.func @residual_of_itself(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{the residual must have the conv's type and be computed before the fusion}}
  %y = hpsrt.fused_dense -> tensor<1x4x8x8xf32> {
    %c = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
    %s = hps.add %c, %c : tensor<1x4x8x8xf32>
    hpsrt.yield %s : tensor<1x4x8x8xf32>
  }
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @broadcast_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{the residual must have the conv's type and be computed before the fusion}}
  %y = hpsrt.fused_dense -> tensor<1x4x8x8xf32> {
    %c = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
    %s = hps.add %c, %b : tensor<1x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<1x4x8x8xf32>
    hpsrt.yield %s : tensor<1x4x8x8xf32>
  }
  return %y : tensor<1x4x8x8xf32>
}

// -----

func.func @activation_of_another(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %r: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'hps.relu' must be an activation of hps.gemm's result}}
  %y = hpsrt.fused_dense -> tensor<4x3xf32> {
    %g = hps.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %t = hps.relu %r : tensor<4x3xf32>
    hpsrt.yield %t : tensor<4x3xf32>
  }
  return %y : tensor<4x3xf32>
}

// -----

func.func @stores_an_intermediate(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{must yield its last op's result alone}}
  %y = hpsrt.fused_dense -> tensor<4x3xf32> {
    %g = hps.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %t = hps.relu %g : tensor<4x3xf32>
    hpsrt.yield %g : tensor<4x3xf32>
  }
  return %y : tensor<4x3xf32>
}

// -----

func.func @wrong_result_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields 'tensor<8xf32>' but returns 'tensor<4xf32>'}}
  %y = hpsrt.fused_loop -> tensor<4xf32> {
    %n = hps.neg %x : tensor<8xf32>
    %a = hps.abs %n : tensor<8xf32>
    hpsrt.yield %a : tensor<8xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @two_shapes(%x: tensor<8xf32>, %v: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'hps.abs' must have one result of the loop's shape}}
  %y = hpsrt.fused_loop -> tensor<2x4xf32> {
    %n = hps.neg %x : tensor<8xf32>
    %a = hps.abs %v : tensor<2x4xf32>
    hpsrt.yield %a : tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// -----

func.func @empty(%x: tensor<8xf32>) {
  // expected-error @+1 {{fuses no op}}
  hpsrt.fused_loop {
    hpsrt.yield
  }
  return
}

// -----

func.func @no_recurrence(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{must be an hps.gemm, views, and an hps.recurrence}}
  %y = hpsrt.projected_recurrence -> tensor<4x3xf32> {
    %g = hps.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    hpsrt.yield %g : tensor<4x3xf32>
  }
  return %y : tensor<4x3xf32>
}

// -----

func.func @yield_outside(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{expects parent op to be one of 'hpsrt.fused_dense, hpsrt.fused_loop, hpsrt.projected_recurrence'}}
  hpsrt.yield %x : tensor<8xf32>
}

// -----

func.func @held_layouts(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error @+1 {{'hpsrt.held_layouts' must hold one #hpsrt.layout per result (1)}}
  %n = hps.neg %x {hpsrt.held_layouts = [#hpsrt.layout<Native>, #hpsrt.layout<Plain>]} : tensor<1x16x8x8xf32>
  return %n : tensor<1x16x8x8xf32>
}

// -----

func.func @unknown_attribute(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{unknown hpsrt attribute 'hpsrt.layout'}}
  %n = hps.neg %x {hpsrt.layout = 1} : tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

func.func @arena_offsets(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'hpsrt.arena_offsets' must hold one offset (or -1) per result (1)}}
  %n = hps.neg %x {hpsrt.arena_offsets = array<i64: -2>} : tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

// expected-error @+1 {{'hpsrt.arena_bytes' must be a non-negative integer}}
func.func @arena_bytes() attributes {hpsrt.arena_bytes = "big"} {
  return
}

// -----

func.func @weights_offset() -> tensor<2xf32> {
  // expected-error @+1 {{'hpsrt.weights_offset' must be a non-negative integer on an op with one result}}
  %c = hps.constant {hpsrt.weights_offset = -64 : i64} dense<1.0> : tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// expected-error @+1 {{'hpsrt.weights_range' must be [begin, end) with 0 <= begin <= end}}
func.func @weights_range() attributes {hpsrt.weights_range = array<i64: 128, 64>} {
  return
}
