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

// -----

// Einsum's batch labels (b, h) merged into one matmul batch axis, then
// split again: each sample owns h consecutive positions of the merged
// axis, so the samples stay apart.
// CHECK-LABEL: func.func @merged_batch_labels
// CHECK-NOT: hps.mixes_samples
func.func @merged_batch_labels(%q: tensor<2x3x5x8xf32> {hps.batched}, %k: tensor<2x3x8x5xf32> {hps.batched}) -> (tensor<2x3x5x5xf32> {hps.batched}) {
  %q3 = hps.reshape %q {shape = array<i64: 6, 5, 8>} : (tensor<2x3x5x8xf32>) -> tensor<6x5x8xf32>
  %k3 = hps.reshape %k {shape = array<i64: 6, 8, 5>} : (tensor<2x3x8x5xf32>) -> tensor<6x8x5xf32>
  %s = hps.matmul %q3, %k3 : (tensor<6x5x8xf32>, tensor<6x8x5xf32>) -> tensor<6x5x5xf32>
  %s4 = hps.reshape %s {shape = array<i64: 2, 3, 5, 5>} : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  return %s4 : tensor<2x3x5x5xf32>
}

// -----

// Resize's [P, in, T] view merges the batch with the channels; the
// interpolation matrix is the same for every image.
// CHECK-LABEL: func.func @resize_view
// CHECK-NOT: hps.mixes_samples
func.func @resize_view(%x: tensor<2x3x4x4xf32> {hps.batched}) -> (tensor<2x3x8x4xf32> {hps.batched}) {
  %m = hps.constant dense<0.5> : tensor<8x4xf32>
  %v = hps.reshape %x {shape = array<i64: 6, 4, 4>} : (tensor<2x3x4x4xf32>) -> tensor<6x4x4xf32>
  %r = hps.matmul %m, %v : (tensor<8x4xf32>, tensor<6x4x4xf32>) -> tensor<6x8x4xf32>
  %y = hps.reshape %r {shape = array<i64: 2, 3, 8, 4>} : (tensor<6x8x4xf32>) -> tensor<2x3x8x4xf32>
  return %y : tensor<2x3x8x4xf32>
}

// -----

// Merged with other positions (inside them or outside) and returned so,
// the samples are not the output's rows; split across axes, they mix.
// CHECK-LABEL: func.func @merged_outputs
// CHECK-SAME: -> (tensor<12xf32> {hps.batched, hps.mixes_samples = "it holds the samples along axis 0 merged with other positions"}, tensor<12xf32> {hps.batched, hps.mixes_samples = "it holds the samples along axis 0 merged with other positions"}, tensor<2x2x3xf32> {hps.batched, hps.mixes_samples = "'hps.reshape' reads the samples along axis 0 and splits it across axes"})
func.func @merged_outputs(%x: tensor<4x3xf32> {hps.batched}) -> (tensor<12xf32> {hps.batched}, tensor<12xf32> {hps.batched}, tensor<2x2x3xf32> {hps.batched}) {
  %flat = hps.reshape %x {shape = array<i64: 12>} : (tensor<4x3xf32>) -> tensor<12xf32>
  %t = hps.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %tflat = hps.reshape %t {shape = array<i64: 12>} : (tensor<3x4xf32>) -> tensor<12xf32>
  %split = hps.reshape %x {shape = array<i64: 2, 2, 3>} : (tensor<4x3xf32>) -> tensor<2x2x3xf32>
  return %flat, %tflat, %split : tensor<12xf32>, tensor<12xf32>, tensor<2x2x3xf32>
}

// -----

// A recurrence runs each sequence (projected's axis 1) apart from the
// others, and the input projection's [T * N, I] rows keep them apart too;
// an initial state of fixed rows pairs each with one of them.
// CHECK-LABEL: func.func @recurrence
// CHECK-SAME: -> (tensor<4x5x2xf32> {hps.batched}, tensor<4x2xf32> {hps.batched}, tensor<4x2xf32> {hps.batched, hps.mixes_samples = "'hps.recurrence' reads the samples along axis 1 and combines it with a tensor of a fixed extent there"})
func.func @recurrence(%x: tensor<4x5x3xf32> {hps.batched}) -> (tensor<4x5x2xf32> {hps.batched}, tensor<4x2xf32> {hps.batched}, tensor<4x2xf32> {hps.batched}) {
  %xt = hps.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<4x5x3xf32>) -> tensor<5x4x3xf32>
  %rows = hps.reshape %xt {shape = array<i64: 20, 3>} : (tensor<5x4x3xf32>) -> tensor<20x3xf32>
  %w = hps.weight "w" dense<0.5> : tensor<3x8xf32>
  %proj = hps.gemm %rows, %w : (tensor<20x3xf32>, tensor<3x8xf32>) -> tensor<20x8xf32>
  %p = hps.reshape %proj {shape = array<i64: 5, 4, 8>} : (tensor<20x8xf32>) -> tensor<5x4x8xf32>
  %r = hps.weight "r" dense<0.5> : tensor<8x2xf32>
  %rb = hps.weight "rb" dense<0.1> : tensor<8xf32>
  %h0 = hps.constant dense<0.0> : tensor<4x2xf32>
  %fixed = hps.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %y, %h, %c = hps.recurrence %p, %r, %rb, %h0 initial_c %h0 {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<5x4x8xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<5x4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
  %yt = hps.transpose %y {perm = array<i64: 1, 0, 2>} : (tensor<5x4x2xf32>) -> tensor<4x5x2xf32>
  %y2, %h2, %c2 = hps.recurrence %p, %r, %rb, %fixed initial_c %h0 {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<5x4x8xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<5x4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
  return %yt, %h, %h2 : tensor<4x5x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// A value of no elements follows its extent through a reshape (the offset
// arithmetic divided by zero there).
// CHECK-LABEL: func.func @no_elements
// CHECK-NOT: hps.mixes_samples
func.func @no_elements(%x: tensor<4x0xf32> {hps.batched}) -> (tensor<4x0x1xf32> {hps.batched}) {
  %r = hps.reshape %x {shape = array<i64: 4, 0, 1>} : (tensor<4x0xf32>) -> tensor<4x0x1xf32>
  return %r : tensor<4x0x1xf32>
}
