// RUN: heterps-opt --hps-bound-extents --split-input-file %s | FileCheck %s

// Padding passes through position-wise readers; each returned padded value
// names its axis and a new result holding the count (one per count).
// CHECK-LABEL: func @mask_select
// CHECK-SAME: -> (tensor<12x2xi64> {hps.extent_axis = 0 : i64, hps.extent_output = 3 : i64, hps.name = "coords"},
// CHECK-SAME: tensor<12xf32> {hps.extent_axis = 0 : i64, hps.extent_output = 3 : i64},
// CHECK-SAME: tensor<3x4xf32>,
// CHECK-SAME: tensor<i64> {hps.extent_count, hps.name = "extent_3"})
func.func @mask_select(%x: tensor<3x4xf32>) -> (tensor<12x2xi64> {hps.name = "coords"}, tensor<12xf32>, tensor<3x4xf32>) {
  %zero = hps.constant dense<0.0> : tensor<f32>
  %mask = hps.greater %x, %zero : tensor<3x4xf32>, tensor<f32> -> tensor<3x4xi1>
  %i, %n = hps.non_zero %mask : (tensor<3x4xi1>) -> (tensor<2x12xi64>, tensor<i64>)
  %t = hps.transpose %i {perm = array<i64: 1, 0>} : (tensor<2x12xi64>) -> tensor<12x2xi64>
  %strides = hps.constant dense<[4, 1]> : tensor<2xi64>
  %scaled = hps.mul %t, %strides : tensor<12x2xi64>, tensor<2xi64> -> tensor<12x2xi64>
  %flat = hps.reduce sum %scaled {axes = array<i64: 1>} : (tensor<12x2xi64>) -> tensor<12xi64>
  %xs = hps.reshape %x {shape = array<i64: 12>} : (tensor<3x4xf32>) -> tensor<12xf32>
  %picked = hps.gather %xs, %flat : (tensor<12xf32>, tensor<12xi64>) -> tensor<12xf32>
  %sq = hps.mul %picked, %picked : tensor<12xf32>, tensor<12xf32> -> tensor<12xf32>
  return %t, %sq, %x : tensor<12x2xi64>, tensor<12xf32>, tensor<3x4xf32>
}

// -----

// Detection tail: rows picked by the selected boxes keep the padding on
// the gathered axis; a slice of the other axis keeps it too.
// CHECK-LABEL: func @detection
// CHECK-SAME: tensor<6x4xf32> {hps.extent_axis = 0 : i64, hps.extent_output = 2 : i64}
// CHECK-SAME: tensor<6x1xi64> {hps.extent_axis = 0 : i64, hps.extent_output = 2 : i64}
// CHECK-SAME: tensor<i64> {hps.extent_count
func.func @detection(%boxes: tensor<1x10x4xf32>, %scores: tensor<1x3x10xf32>) -> (tensor<6x4xf32>, tensor<6x1xi64>) {
  %max = hps.constant dense<2> : tensor<1xi64>
  %sel, %n = hps.non_max_suppression %boxes, %scores max_per_class %max : (tensor<1x10x4xf32>, tensor<1x3x10xf32>, tensor<1xi64>) -> (tensor<6x3xi64>, tensor<i64>)
  %col = hps.constant dense<2> : tensor<i64>
  %idx = hps.gather %sel, %col {axis = 1 : i64} : (tensor<6x3xi64>, tensor<i64>) -> tensor<6xi64>
  %rows = hps.reshape %boxes {shape = array<i64: 10, 4>} : (tensor<1x10x4xf32>) -> tensor<10x4xf32>
  %picked = hps.gather %rows, %idx : (tensor<10x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
  %cls = hps.slice %sel {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<6x3xi64>) -> tensor<6x1xi64>
  return %picked, %cls : tensor<6x4xf32>, tensor<6x1xi64>
}

// -----

// Unique: the values along the axis, first indices and counts are padded;
// the inverse is not.
// CHECK-LABEL: func @unique
// CHECK-SAME: tensor<2x5xf32> {hps.extent_axis = 1 : i64, hps.extent_output = 3 : i64}
// CHECK-SAME: tensor<5xi64>,
// CHECK-SAME: tensor<5xi64> {hps.extent_axis = 0 : i64, hps.extent_output = 3 : i64}
// CHECK-SAME: tensor<i64> {hps.extent_count
func.func @unique(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<5xi64>, tensor<5xi64>) {
  %v, %f, %inv, %c, %n = hps.unique %x {axis = 1 : i64, sorted} : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<i64>)
  return %v, %inv, %c : tensor<2x5xf32>, tensor<5xi64>, tensor<5xi64>
}

// -----

// Nothing padded reaches the outputs: the signature stays.
// CHECK-LABEL: func @unused(%arg0: tensor<4xf32>) -> tensor<4xf32>
func.func @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i, %n = hps.non_zero %x : (tensor<4xf32>) -> (tensor<1x4xi64>, tensor<i64>)
  return %x : tensor<4xf32>
}

// -----

// A gather along a negative axis counts it from the back.
// CHECK-LABEL: func @gather_negative_axis
// CHECK-SAME: tensor<3x6xf32> {hps.extent_axis = 1 : i64, hps.extent_output = 1 : i64}
func.func @gather_negative_axis(%x: tensor<6xf32>, %t: tensor<3x8xf32>) -> tensor<3x6xf32> {
  %i, %n = hps.non_zero %x : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  %r = hps.reshape %i {shape = array<i64: 6>} : (tensor<1x6xi64>) -> tensor<6xi64>
  %g = hps.gather %t, %r {axis = -1 : i64} : (tensor<3x8xf32>, tensor<6xi64>) -> tensor<3x6xf32>
  return %g : tensor<3x6xf32>
}
