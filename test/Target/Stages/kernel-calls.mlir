// RUN: heterps-translate --hps-to-stage-programs --stage-fuse-elementwise=false %s | FileCheck %s

// The construction and the run of each compute kernel class, with every
// argument spelled out (a change of argument order shows here): MatMul,
// Pool (max, average with and without the pads), BatchNorm, LayerNorm,
// Reduce, Where, Cast, Determinant, Loss (run for hps.loss, runGradient for
// hps.loss_grad) and RecurrentGrad. Elementwise fusion is off, so where and
// cast are kernels of their own. Operands are stage inputs and weights at
// distinct offsets, results stage outputs, so each argument is told apart.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x5x6xf32> {hps.name = "x", hps.batched}, %a: tensor<2x3x4xf32> {hps.name = "a", hps.batched}, %c: tensor<2x1x4xi1> {hps.name = "c", hps.batched}, %m: tensor<2x2x3x3xf32> {hps.name = "m", hps.batched}, %p: tensor<2x5xf32> {hps.name = "p", hps.batched}, %l: tensor<2xi64> {hps.name = "l", hps.batched}, %q: tensor<5x2x9xf32> {hps.name = "q"}, %y: tensor<5x2x3xf32> {hps.name = "y"}, %dy: tensor<5x2x3xf32> {hps.name = "dy"}, %dh: tensor<2x3xf32> {hps.name = "dh"})
    -> (tensor<2x3x4x3xf32> {hps.name = "mp", hps.batched}, tensor<2x3x3x3xf32> {hps.name = "ae", hps.batched}, tensor<2x3x3x3xf32> {hps.name = "ai", hps.batched},
        tensor<2x3x5x6xf32> {hps.name = "bn", hps.batched}, tensor<2x3x4xf32> {hps.name = "ln", hps.batched}, tensor<2x3x5xf32> {hps.name = "mm", hps.batched},
        tensor<2x1x4xf32> {hps.name = "rd", hps.batched}, tensor<2x3x4xf32> {hps.name = "wh", hps.batched}, tensor<2x3x4xi32> {hps.name = "ca", hps.batched},
        tensor<2x2xf32> {hps.name = "det", hps.batched}, tensor<2xf32> {hps.name = "loss", hps.batched}, tensor<2x5xf32> {hps.name = "dl", hps.batched},
        tensor<5x2x9xf32> {hps.name = "dq"}, tensor<9x3xf32> {hps.name = "dr"}, tensor<9xf32> {hps.name = "drb"}, tensor<2x3xf32> {hps.name = "dh0"})
    attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<2x3x5x6xf32>
  hps.send %a to "c1" : tensor<2x3x4xf32>
  hps.send %c to "c2" : tensor<2x1x4xi1>
  hps.send %m to "c3" : tensor<2x2x3x3xf32>
  hps.send %p to "c4" : tensor<2x5xf32>
  hps.send %l to "c5" : tensor<2xi64>
  hps.send %q to "c6" : tensor<5x2x9xf32>
  hps.send %y to "c7" : tensor<5x2x3xf32>
  hps.send %dy to "c8" : tensor<5x2x3xf32>
  hps.send %dh to "c9" : tensor<2x3xf32>
  %mp = hps.recv "o0" : tensor<2x3x4x3xf32>
  %ae = hps.recv "o1" : tensor<2x3x3x3xf32>
  %ai = hps.recv "o2" : tensor<2x3x3x3xf32>
  %bn = hps.recv "o3" : tensor<2x3x5x6xf32>
  %ln = hps.recv "o4" : tensor<2x3x4xf32>
  %mm = hps.recv "o5" : tensor<2x3x5xf32>
  %rd = hps.recv "o6" : tensor<2x1x4xf32>
  %wh = hps.recv "o7" : tensor<2x3x4xf32>
  %ca = hps.recv "o8" : tensor<2x3x4xi32>
  %det = hps.recv "o9" : tensor<2x2xf32>
  %loss = hps.recv "o10" : tensor<2xf32>
  %dl = hps.recv "o11" : tensor<2x5xf32>
  %dq = hps.recv "o12" : tensor<5x2x9xf32>
  %dr = hps.recv "o13" : tensor<9x3xf32>
  %drb = hps.recv "o14" : tensor<9xf32>
  %dh0 = hps.recv "o15" : tensor<2x3xf32>
  return %mp, %ae, %ai, %bn, %ln, %mm, %rd, %wh, %ca, %det, %loss, %dl, %dq, %dr, %drb, %dh0 : tensor<2x3x4x3xf32>, tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>, tensor<2x3x5x6xf32>, tensor<2x3x4xf32>, tensor<2x3x5xf32>, tensor<2x1x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xi32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x5xf32>, tensor<5x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x5x6xf32>
  %a = hps.recv "c1" : tensor<2x3x4xf32>
  %c = hps.recv "c2" : tensor<2x1x4xi1>
  %m = hps.recv "c3" : tensor<2x2x3x3xf32>
  %p = hps.recv "c4" : tensor<2x5xf32>
  %l = hps.recv "c5" : tensor<2xi64>
  %q = hps.recv "c6" : tensor<5x2x9xf32>
  %y = hps.recv "c7" : tensor<5x2x3xf32>
  %dy = hps.recv "c8" : tensor<5x2x3xf32>
  %dh = hps.recv "c9" : tensor<2x3xf32>
  // Weights: 64-byte aligned, at 0, 64, 128, ... in this order.
  %scale = hps.weight "scale" dense<1.5> : tensor<3xf32>
  %shift = hps.weight "shift" dense<0.5> : tensor<3xf32>
  %mean = hps.weight "mean" dense<0.25> : tensor<3xf32>
  %var = hps.weight "var" dense<2.0> : tensor<3xf32>
  %g = hps.weight "g" dense<1.25> : tensor<4xf32>
  %beta = hps.weight "beta" dense<0.75> : tensor<4xf32>
  %b = hps.weight "b" dense<0.5> : tensor<4x5xf32>
  %other = hps.weight "other" dense<3.0> : tensor<4xf32>
  %target = hps.weight "target" dense<0.5> : tensor<2x5xf32>
  %r = hps.weight "r" dense<0.5> : tensor<9x3xf32>
  %rb = hps.weight "rb" dense<0.25> : tensor<9xf32>
  %h0 = hps.weight "h0" dense<0.125> : tensor<2x3xf32>
  %mp = hps.max_pool %x {kernel_shape = array<i64: 2, 3>, strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 2, 1>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x4x3xf32>
  %ae = hps.avg_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x3x3xf32>
  %ai = hps.avg_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad} : (tensor<2x3x5x6xf32>) -> tensor<2x3x3x3xf32>
  %bn = hps.batch_norm %x, %scale, %shift, %mean, %var {epsilon = 1.0e-3 : f32} : (tensor<2x3x5x6xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5x6xf32>
  %ln = hps.layer_norm %a, %g, %beta {axis = -1 : i64, epsilon = 1.0e-2 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %mm = hps.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %rd = hps.reduce mean %a {axes = array<i64: -2>, keepdims} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %wh = hps.where %c, %a, %other : (tensor<2x1x4xi1>, tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %ca = hps.cast %a : (tensor<2x3x4xf32>) -> tensor<2x3x4xi32>
  %det = hps.determinant %m : (tensor<2x2x3x3xf32>) -> tensor<2x2xf32>
  %loss = hps.loss softmax_ce %p, %l {from_logits} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<2xf32>
  %dl = hps.loss_grad mse %p, %target : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %dq, %dr, %drb, %dh0 = hps.recurrence_grad %q, %r, %rb, %h0 y %y grad_y %dy grad_h_last %dh {activations = ["Sigmoid", "Relu"], cell = "gru", clip = 2.0 : f32, reverse, linear_before_reset} : (tensor<5x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>, tensor<5x2x3xf32>, tensor<5x2x3xf32>, tensor<2x3xf32>) -> (tensor<5x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>)
  hps.send %mp to "o0" : tensor<2x3x4x3xf32>
  hps.send %ae to "o1" : tensor<2x3x3x3xf32>
  hps.send %ai to "o2" : tensor<2x3x3x3xf32>
  hps.send %bn to "o3" : tensor<2x3x5x6xf32>
  hps.send %ln to "o4" : tensor<2x3x4xf32>
  hps.send %mm to "o5" : tensor<2x3x5xf32>
  hps.send %rd to "o6" : tensor<2x1x4xf32>
  hps.send %wh to "o7" : tensor<2x3x4xf32>
  hps.send %ca to "o8" : tensor<2x3x4xi32>
  hps.send %det to "o9" : tensor<2x2xf32>
  hps.send %loss to "o10" : tensor<2xf32>
  hps.send %dl to "o11" : tensor<2x5xf32>
  hps.send %dq to "o12" : tensor<5x2x9xf32>
  hps.send %dr to "o13" : tensor<9x3xf32>
  hps.send %drb to "o14" : tensor<9xf32>
  hps.send %dh0 to "o15" : tensor<2x3xf32>
  return
}
}

// Pool's shapes are x, y, kernel, strides, dilations, then the begin and end
// pads of each spatial axis; the average pools differ only in their kind.
// CHECK: HPS_RUN_ONCE void buildKernels0() {
// CHECK-NEXT: kPool[0] = std::make_unique<backend::Pool>(ctx, DType::F32, PoolKind::Max, Shape{2, 3, 5, 6}, Shape{2, 3, 4, 3}, Shape{2, 3}, Shape{1, 2}, Shape{2, 1}, Shape{1, 0}, Shape{0, 1});
// CHECK-NEXT: kPool[1] = std::make_unique<backend::Pool>(ctx, DType::F32, PoolKind::AvgExcludePad, Shape{2, 3, 5, 6}, Shape{2, 3, 3, 3}, Shape{3, 2}, Shape{2, 2}, Shape{1, 1}, Shape{1, 0}, Shape{1, 1});
// CHECK-NEXT: kPool[2] = std::make_unique<backend::Pool>(ctx, DType::F32, PoolKind::AvgIncludePad, Shape{2, 3, 5, 6}, Shape{2, 3, 3, 3}, Shape{3, 2}, Shape{2, 2}, Shape{1, 1}, Shape{1, 0}, Shape{1, 1});
// CHECK-NEXT: kBatchNorm[0] = std::make_unique<backend::BatchNorm>(ctx, DType::F32, Shape{2, 3, 5, 6}, 1.000000047e-03f);
// LayerNorm's axis -1 is normalized; the scale's shape as stored, and a bias.
// CHECK-NEXT: kLayerNorm[0] = std::make_unique<backend::LayerNorm>(ctx, DType::F32, Shape{2, 3, 4}, 2, 9.999999776e-03f, Shape{4}, true);
// a, b, y, no activation, a constant b (a weight).
// CHECK-NEXT: kMatMul[0] = std::make_unique<backend::MatMul>(ctx, DType::F32, Shape{2, 3, 4}, Shape{4, 5}, Shape{2, 3, 5}, Activation{}, true);
// CHECK-NEXT: kReduce[0] = std::make_unique<backend::Reduce>(ctx, DType::F32, ReduceKind::Mean, Shape{2, 3, 4}, std::vector<int64_t>{1}, Shape{2, 1, 4});
// Shapes of cond, x, y and the broadcast result.
// CHECK-NEXT: kWhere[0] = std::make_unique<backend::Where>(ctx, DType::F32, Shape{2, 1, 4}, Shape{2, 3, 4}, Shape{4}, Shape{2, 3, 4});
// CHECK-NEXT: kCast[0] = std::make_unique<backend::Cast>(ctx, DType::F32, DType::I32, 24);
// Four 3x3 matrices.
// CHECK-NEXT: kDeterminant[0] = std::make_unique<backend::Determinant>(ctx, DType::F32, 4, 3);
// Kind, from_logits, n samples, m elements per sample.
// CHECK-NEXT: kLoss[0] = std::make_unique<backend::Loss>(ctx, DType::F32, LossKind::SoftmaxCE, true, 2, 5);
// CHECK-NEXT: kLoss[1] = std::make_unique<backend::Loss>(ctx, DType::F32, LossKind::MSE, false, 2, 5);
// cell, steps, batch, hidden, reverse, activations (gru's two, the third
// the default), clip, linear_before_reset, recurrent bias, no lengths, no
// peepholes, no fused projection.
// CHECK-NEXT: kRecurrentGrad[0] = std::make_unique<backend::RecurrentGrad>(ctx, RecurrentParams{RecurrentCell::GRU, 5, 2, 3, true, {UnaryKind::Sigmoid, UnaryKind::Relu, UnaryKind::Tanh}, true, 2.000000000e+00f, true, true, false, false, 0});
// CHECK-NEXT: {{^ *[}]$}}

// Stage inputs in0..in9 are x, a, c, m, p, l, q, y, dy, dh; the weights lie
// 64-byte aligned in declaration order (scale 0, shift 64, mean 128, var
// 192, g 256, beta 320, b 384, other 512, target 576, r 640, rb 768, h0 832).
// CHECK: kPool[0]->run(static_cast<const void *>(in0), out0);
// CHECK-NEXT: kPool[1]->run(static_cast<const void *>(in0), out1);
// CHECK-NEXT: kPool[2]->run(static_cast<const void *>(in0), out2);
// CHECK-NEXT: kBatchNorm[0]->run(static_cast<const void *>(in0), static_cast<const void *>((weights + 0)), static_cast<const void *>((weights + 64)), static_cast<const void *>((weights + 128)), static_cast<const void *>((weights + 192)), out3);
// CHECK-NEXT: kLayerNorm[0]->run(static_cast<const void *>(in1), static_cast<const void *>((weights + 256)), static_cast<const void *>((weights + 320)), out4);
// CHECK-NEXT: kMatMul[0]->run(static_cast<const void *>(in1), static_cast<const void *>((weights + 384)), out5);
// CHECK-NEXT: kReduce[0]->run(static_cast<const void *>(in1), out6);
// CHECK-NEXT: kWhere[0]->run(static_cast<const void *>(in2), static_cast<const void *>(in1), static_cast<const void *>((weights + 512)), out7);
// CHECK-NEXT: kCast[0]->run(static_cast<const void *>(in1), out8);
// CHECK-NEXT: kDeterminant[0]->run(static_cast<const void *>(in3), out9);
// hps.loss runs run(), hps.loss_grad runGradient().
// CHECK-NEXT: kLoss[0]->run(static_cast<const void *>(in4), static_cast<const void *>(in5), out10);
// CHECK-NEXT: kLoss[1]->runGradient(static_cast<const void *>(in4), static_cast<const void *>((weights + 576)), out11);
// projected, r, rb, lengths, h0, c0, peepholes, y, dy, dhLast, dcLast, then
// dProjected, dR, dRb, dh0, dc0, dPeepholes.
// CHECK-NEXT: kRecurrentGrad[0]->run(static_cast<const void *>(in6), static_cast<const void *>((weights + 640)), static_cast<const void *>((weights + 768)), nullptr, static_cast<const void *>((weights + 832)), nullptr, nullptr, static_cast<const void *>(in7), static_cast<const void *>(in8), static_cast<const void *>(in9), nullptr, out12, out13, out14, out15, nullptr, nullptr);
