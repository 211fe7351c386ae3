// A small two-tower model for heterps-profile: a conv tower and a sparse
// embedding tower joined by concat. Dynamic batch, bound by --batch.
func.func @main(%img: tensor<?x3x16x16xf32>, %ids: tensor<?x4xi64>) -> tensor<?x10xf32> {
  %f = hps.weight "conv.w" dense<0.01> : tensor<8x3x3x3xf32>
  %c = hps.conv %img, %f {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x16x16xf32> loc("conv")
  %r = hps.relu %c : tensor<?x8x16x16xf32> loc("relu")
  %r2 = hps.relu %r : tensor<?x8x16x16xf32> loc("relu_again")
  %p = hps.max_pool %r2 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x8x16x16xf32>) -> tensor<?x8x8x8xf32> loc("pool")
  %flat = hps.reshape %p {shape = array<i64: -1, 512>} : (tensor<?x8x8x8xf32>) -> tensor<?x512xf32> loc("flatten")
  %t = hps.weight "emb" dense<0.01> : tensor<1000x16xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling sum>} : (tensor<1000x16xf32>, tensor<?x4xi64>) -> tensor<?x16xf32> loc("embedding")
  %cat = hps.concat %flat, %e {axis = 1 : i64} : (tensor<?x512xf32>, tensor<?x16xf32>) -> tensor<?x528xf32> loc("concat")
  %w = hps.weight "fc.w" dense<0.01> : tensor<528x10xf32>
  %b = hps.weight "fc.b" dense<0.01> : tensor<10xf32>
  %y = hps.gemm %cat, %w, %b : (tensor<?x528xf32>, tensor<528x10xf32>, tensor<10xf32>) -> tensor<?x10xf32> loc("fc")
  %s = hps.softmax %y {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32> loc("prob")
  return %s : tensor<?x10xf32>
}
