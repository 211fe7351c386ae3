// One layer of each op family heterps-profile constructs a runtime kernel
// for beyond profile-model.mlir: variadic results (split), indices (gather,
// scatter), a result its shape rule sizes (a concat along the dynamic
// batch: twice the batch).
func.func @main(%x: tensor<8x3x5x6xf32>, %a: tensor<8x3x4xf32>, %ids: tensor<3xi64>, %c: tensor<8x1xi1>, %e: tensor<3x1xf32>, %n: tensor<8x3xi32>, %q: tensor<?x4xf32>) -> (tensor<8x3x5x6xf32>, tensor<8x3x4xf32>, tensor<1x3x1xf32>, tensor<8x3x4xf32>, tensor<8x5x4xf32>, tensor<4x8x3xf32>, tensor<8x3x3xf32>, tensor<8x4x7xf32>, tensor<8x3xf32>, tensor<8x3x4xi32>, tensor<8x3x1xf32>, tensor<8x3x3xf32>, tensor<2x3x4xf32>, tensor<8x3x3x3xf32>, tensor<8x3x1x1xf32>, tensor<8x3x4xf32>, tensor<8x3x5xf32>, tensor<8x3x4xf32>, tensor<8x3xi32>, tensor<?x4xf32>) {
  %s = hps.weight "bn.s" dense<1.0> : tensor<3xf32>
  %b = hps.weight "bn.b" dense<0.0> : tensor<3xf32>
  %bn = hps.batch_norm %x, %s, %b, %b, %s {epsilon = 1.0e-3 : f32} : (tensor<8x3x5x6xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3x5x6xf32> loc("batch_norm")
  %g = hps.weight "ln.g" dense<1.0> : tensor<3x4xf32>
  %ln = hps.layer_norm %a, %g {axis = -2 : i64} : (tensor<8x3x4xf32>, tensor<3x4xf32>) -> tensor<8x3x4xf32> loc("layer_norm")
  %m = hps.reduce log_sum_exp %a {axes = array<i64: 2, -3>, keepdims} : (tensor<8x3x4xf32>) -> tensor<1x3x1xf32> loc("reduce")
  %d = hps.weight "table" dense<0.5> : tensor<8x5x4xf32>
  %ga = hps.gather %d, %ids {axis = 1 : i64} : (tensor<8x5x4xf32>, tensor<3xi64>) -> tensor<8x3x4xf32> loc("gather")
  %sc = hps.scatter %d, %ids, %a {axis = -2 : i64, reduction = #hps<scatter_reduction add>} : (tensor<8x5x4xf32>, tensor<3xi64>, tensor<8x3x4xf32>) -> tensor<8x5x4xf32> loc("scatter")
  %tr = hps.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<8x3x4xf32>) -> tensor<4x8x3xf32> loc("transpose")
  %sl = hps.slice %a {starts = array<i64: -3>, ends = array<i64: 100>, axes = array<i64: -1>, steps = array<i64: 1>} : (tensor<8x3x4xf32>) -> tensor<8x3x3xf32> loc("slice")
  %pd = hps.pad %a {mode = #hps<pad_mode reflect>, pads = array<i64: 0, 1, 0, 0, 0, 3>, value = 1.5 : f32} : (tensor<8x3x4xf32>) -> tensor<8x4x7xf32> loc("pad")
  %t = hps.weight "t" dense<1.0> : tensor<3xf32>
  %f = hps.weight "f" dense<2.0> : tensor<8x3xf32>
  %w = hps.where %c, %f, %t : (tensor<8x1xi1>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32> loc("where")
  %ca = hps.cast %a : (tensor<8x3x4xf32>) -> tensor<8x3x4xi32> loc("cast")
  %sp:2 = hps.split %a {axis = -1 : i64, sizes = array<i64: 1, 3>} : (tensor<8x3x4xf32>) -> (tensor<8x3x1xf32>, tensor<8x3x3xf32>) loc("split")
  %ex = hps.expand %e {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32> loc("expand")
  %ap = hps.avg_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<8x3x5x6xf32>) -> tensor<8x3x3x3xf32> loc("avg_pool")
  %gp = hps.global_avg_pool %x : (tensor<8x3x5x6xf32>) -> tensor<8x3x1x1xf32> loc("global_avg_pool")
  %ls = hps.log_softmax %a {axis = -2 : i64} : (tensor<8x3x4xf32>) -> tensor<8x3x4xf32> loc("log_softmax")
  %mw = hps.weight "mm.w" dense<0.5> : tensor<4x5xf32>
  %mm = hps.matmul %a, %mw : (tensor<8x3x4xf32>, tensor<4x5xf32>) -> tensor<8x3x5xf32> loc("matmul")
  %sg = hps.sigmoid %a : tensor<8x3x4xf32> loc("sigmoid")
  %pw = hps.pow %n, %n : tensor<8x3xi32> loc("pow")
  %cb = hps.concat %q, %q {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> loc("concat_batch")
  return %bn, %ln, %m, %ga, %sc, %tr, %sl, %pd, %w, %ca, %sp#0, %sp#1, %ex, %ap, %gp, %ls, %mm, %sg, %pw, %cb : tensor<8x3x5x6xf32>, tensor<8x3x4xf32>, tensor<1x3x1xf32>, tensor<8x3x4xf32>, tensor<8x5x4xf32>, tensor<4x8x3xf32>, tensor<8x3x3xf32>, tensor<8x4x7xf32>, tensor<8x3xf32>, tensor<8x3x4xi32>, tensor<8x3x1xf32>, tensor<8x3x3xf32>, tensor<2x3x4xf32>, tensor<8x3x3x3xf32>, tensor<8x3x1x1xf32>, tensor<8x3x4xf32>, tensor<8x3x5xf32>, tensor<8x3x4xf32>, tensor<8x3xi32>, tensor<?x4xf32>
}
