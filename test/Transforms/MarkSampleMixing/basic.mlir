// RUN: heterps-opt --hps-mark-sample-mixing --split-input-file %s | FileCheck %s

// An MLP keeps each sample apart: no mark.
// CHECK-LABEL: func.func @mlp
// CHECK-NOT: hps.mixes_samples
func.func @mlp(%x: tensor<4x8xf32> {hps.batched}) -> (tensor<4x3xf32> {hps.batched}) {
  %w = hps.weight "w" dense<0.5> : tensor<8x3xf32>
  %b = hps.weight "b" dense<0.1> : tensor<3xf32>
  %h = hps.gemm %x, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = hps.relu %h : tensor<4x3xf32>
  %s = hps.softmax %r {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// A softmax over the batch mixes the samples.
// CHECK-LABEL: func.func @softmax_over_batch
// CHECK-SAME: hps.mixes_samples = "'hps.softmax' reads the samples along axis 0 and normalizes over that axis"
func.func @softmax_over_batch(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<4x3xf32> {hps.batched}) {
  %s = hps.softmax %x {axis = 0 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// A reduction over the batch, returned unbatched; the mark follows what
// reads a mixed value, and names the op that mixed it.
// CHECK-LABEL: func.func @mean_over_batch
// CHECK-SAME: hps.mixes_samples = "'hps.reduce' reads the samples along axis 0 and reduces over that axis"
func.func @mean_over_batch(%x: tensor<4x3xf32> {hps.batched}) -> tensor<1x3xf32> {
  %m = hps.reduce mean %x {axes = array<i64: 0>, keepdims} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %r = hps.relu %m : tensor<1x3xf32>
  return %r : tensor<1x3xf32>
}

// -----

// Attention over [batch, heads, seq, dim]: batched matmuls pair each
// sample with itself; a transpose that moves the batch axis keeps it
// followed, and an output holding the samples along another axis is
// marked.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: -> (tensor<2x3x5x4xf32> {hps.batched}, tensor<5x2x3x4xf32> {hps.batched, hps.mixes_samples = "it holds the samples along axis 1, not 0"})
func.func @attention(%q: tensor<2x3x5x8xf32> {hps.batched}, %k: tensor<2x3x8x5xf32> {hps.batched}, %v: tensor<2x3x5x4xf32> {hps.batched}) -> (tensor<2x3x5x4xf32> {hps.batched}, tensor<5x2x3x4xf32> {hps.batched}) {
  %s = hps.matmul %q, %k : (tensor<2x3x5x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x5x5xf32>
  %p = hps.softmax %s {axis = 3 : i64} : (tensor<2x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %y = hps.matmul %p, %v : (tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  %t = hps.transpose %y {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<5x2x3x4xf32>
  return %y, %t : tensor<2x3x5x4xf32>, tensor<5x2x3x4xf32>
}

// -----

// A constant of the batch's extent added to the samples pairs each sample
// with a fixed row; a splat constant does not.
// CHECK-LABEL: func.func @fixed_rows
// CHECK-SAME: -> (tensor<4x3xf32> {hps.batched, hps.mixes_samples = "'hps.add' reads the samples along axis 0 and combines it with a tensor of a fixed extent there"}, tensor<4x3xf32> {hps.batched})
func.func @fixed_rows(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<4x3xf32> {hps.batched}, tensor<4x3xf32> {hps.batched}) {
  %rows = hps.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 1.0, 1.0]]> : tensor<4x3xf32>
  %splat = hps.constant dense<2.0> : tensor<4x3xf32>
  %a = hps.add %x, %rows : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %b = hps.add %x, %splat : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %a, %b : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A matrix of samples times a vector keeps each sample apart (so does a
// vector times a matrix whose batch axis is not contracted); a transposed
// conv (ConvTranspose, hps.conv_grad_input) keeps each image apart. They
// were marked as mixing before 2026-12-02, and other sample counts refused.
// CHECK-LABEL: func.func @vectors_and_conv_transpose
// CHECK-NOT: hps.mixes_samples
func.func @vectors_and_conv_transpose(%x: tensor<4x6xf32> {hps.batched}, %y: tensor<4x6x2xf32> {hps.batched}, %g: tensor<4x6x4x4xf32> {hps.batched}) -> (tensor<4xf32> {hps.batched}, tensor<4x2xf32> {hps.batched}, tensor<4x3x8x8xf32> {hps.batched}) {
  %v = hps.weight "v" dense<0.5> : tensor<6xf32>
  %xv = hps.matmul %x, %v : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4xf32>
  %vy = hps.matmul %v, %y : (tensor<6xf32>, tensor<4x6x2xf32>) -> tensor<4x2xf32>
  %w = hps.weight "w" dense<0.5> : tensor<6x1x3x3xf32>
  %dx = hps.conv_grad_input %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<4x6x4x4xf32>, tensor<6x1x3x3xf32>) -> tensor<4x3x8x8xf32>
  return %xv, %vy, %dx : tensor<4xf32>, tensor<4x2xf32>, tensor<4x3x8x8xf32>
}

// -----

// A vector of samples contracted with a matrix mixes them.
// CHECK-LABEL: func.func @vector_of_samples
// CHECK-SAME: hps.mixes_samples = "'hps.matmul' reads the samples along axis 0 and multiplies a vector along it"
func.func @vector_of_samples(%x: tensor<4xf32> {hps.batched}) -> tensor<3xf32> {
  %w = hps.weight "w" dense<0.5> : tensor<4x3xf32>
  %r = hps.matmul %x, %w : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
