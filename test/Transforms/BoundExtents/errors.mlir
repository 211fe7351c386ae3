// RUN: heterps-opt --hps-bound-extents --split-input-file --verify-diagnostics %s

func.func @reduce_over_padded(%x: tensor<3x4xf32>) -> tensor<2xi64> {
  // expected-note @+1 {{the data-dependent op}}
  %i, %n = hps.non_zero %x : (tensor<3x4xf32>) -> (tensor<2x12xi64>, tensor<i64>)
  // expected-error @+1 {{'hps.reduce' reads a value whose extent along axis 1 is data-dependent (it comes from 'hps.non_zero') and reduces over that axis}}
  %s = hps.reduce sum %i {axes = array<i64: 1>} : (tensor<2x12xi64>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

func.func @fixed_extent_operand(%x: tensor<12xf32>, %y: tensor<12xf32>) -> tensor<12xf32> {
  // expected-note @+1 {{the data-dependent op}}
  %i, %n = hps.non_zero %x : (tensor<12xf32>) -> (tensor<1x12xi64>, tensor<i64>)
  %r = hps.reshape %i {shape = array<i64: 12>} : (tensor<1x12xi64>) -> tensor<12xi64>
  %f = hps.cast %r : (tensor<12xi64>) -> tensor<12xf32>
  // expected-error @+1 {{'hps.add' reads a value whose extent along axis 0 is data-dependent (it comes from 'hps.non_zero') and combines it with a tensor of a fixed extent there}}
  %s = hps.add %f, %y : tensor<12xf32>, tensor<12xf32> -> tensor<12xf32>
  return %s : tensor<12xf32>
}

// -----

func.func @two_extents(%x: tensor<6xf32>, %y: tensor<6xf32>) -> tensor<1x6xi64> {
  %i, %n = hps.non_zero %x : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  // expected-note @+1 {{the data-dependent op}}
  %j, %m = hps.non_zero %y : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  // expected-error @+1 {{combines it with positions of another extent or axis}}
  %s = hps.add %i, %j : tensor<1x6xi64>, tensor<1x6xi64> -> tensor<1x6xi64>
  return %s : tensor<1x6xi64>
}

// -----

func.func @gather_along_padded(%x: tensor<6xf32>, %k: tensor<2xi64>) -> tensor<2xi64> {
  // expected-note @+1 {{the data-dependent op}}
  %i, %n = hps.non_zero %x : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  %r = hps.reshape %i {shape = array<i64: 6>} : (tensor<1x6xi64>) -> tensor<6xi64>
  // expected-error @+1 {{gathers along that axis}}
  %g = hps.gather %r, %k : (tensor<6xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %g : tensor<2xi64>
}

// -----

func.func @nonzero_of_padded(%x: tensor<6xf32>) -> tensor<2x6xi64> {
  // expected-note @+1 {{the data-dependent op}}
  %i, %n = hps.non_zero %x : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  // expected-error @+1 {{its result would depend on the padding}}
  %j, %m = hps.non_zero %i : (tensor<1x6xi64>) -> (tensor<2x6xi64>, tensor<i64>)
  return %j : tensor<2x6xi64>
}

// -----

func.func @slice_of_padded(%x: tensor<6xf32>) -> tensor<1x3xi64> {
  // expected-note @+1 {{the data-dependent op}}
  %i, %n = hps.non_zero %x : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  // expected-error @+1 {{slices that axis}}
  %s = hps.slice %i {axes = array<i64: 1>, ends = array<i64: 3>, starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<1x6xi64>) -> tensor<1x3xi64>
  return %s : tensor<1x3xi64>
}

// -----

func.func @expand_padded(%x: tensor<1xf32>) -> tensor<1x4xi64> {
  // expected-note @+1 {{the data-dependent op}}
  %i, %n = hps.non_zero %x : (tensor<1xf32>) -> (tensor<1x1xi64>, tensor<i64>)
  // expected-error @+1 {{broadcasts that axis}}
  %e = hps.expand %i {shape = array<i64: 1, 4>} : (tensor<1x1xi64>) -> tensor<1x4xi64>
  return %e : tensor<1x4xi64>
}
