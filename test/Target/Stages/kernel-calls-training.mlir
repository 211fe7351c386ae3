// RUN: heterps-translate --hps-to-stage-programs --stage-fuse-elementwise=false %s | FileCheck %s

// The construction and the run of the training kernel classes, with every
// argument spelled out (a change of argument order shows here): the conv
// adjoints ConvGradInput and ConvGradFilter, and the forward Recurrent (an
// LSTM with lengths, h0 and c0 but no peepholes). The module is a plain
// inference one (no trained weights), so no run is guarded by
// `if (!evaluating)`. The conv grads describe one forward conv whose
// shapes, strides, dilations and begin / end pads all differ; operands are
// stage inputs and weights at distinct offsets, results stage outputs, so
// each argument is told apart.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%dy: tensor<2x6x3x5xf32> {hps.name = "dy", hps.batched}, %x: tensor<2x4x7x6xf32> {hps.name = "x", hps.batched}, %p: tensor<5x2x12xf32> {hps.name = "p"}, %lens: tensor<2xi64> {hps.name = "lens"})
    -> (tensor<2x4x7x6xf32> {hps.name = "dx", hps.batched}, tensor<6x2x3x2xf32> {hps.name = "dw"}, tensor<5x2x3xf32> {hps.name = "y"}, tensor<2x3xf32> {hps.name = "hl"}, tensor<2x3xf32> {hps.name = "cl"})
    attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %dy to "c0" : tensor<2x6x3x5xf32>
  hps.send %x to "c1" : tensor<2x4x7x6xf32>
  hps.send %p to "c2" : tensor<5x2x12xf32>
  hps.send %lens to "c3" : tensor<2xi64>
  %dx = hps.recv "o0" : tensor<2x4x7x6xf32>
  %dw = hps.recv "o1" : tensor<6x2x3x2xf32>
  %y = hps.recv "o2" : tensor<5x2x3xf32>
  %hl = hps.recv "o3" : tensor<2x3xf32>
  %cl = hps.recv "o4" : tensor<2x3xf32>
  return %dx, %dw, %y, %hl, %cl : tensor<2x4x7x6xf32>, tensor<6x2x3x2xf32>, tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %dy = hps.recv "c0" : tensor<2x6x3x5xf32>
  %x = hps.recv "c1" : tensor<2x4x7x6xf32>
  %p = hps.recv "c2" : tensor<5x2x12xf32>
  %lens = hps.recv "c3" : tensor<2xi64>
  // Weights: 64-byte aligned, at 0, 320, 512, 576, 640 in this order.
  %w = hps.weight "w" dense<0.5> : tensor<6x2x3x2xf32>
  %r = hps.weight "r" dense<0.5> : tensor<12x3xf32>
  %rb = hps.weight "rb" dense<0.25> : tensor<12xf32>
  %h0 = hps.weight "h0" dense<0.125> : tensor<2x3xf32>
  %c0 = hps.weight "c0" dense<0.375> : tensor<2x3xf32>
  %dx = hps.conv_grad_input %dy, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 2>, group = 2 : i64} : (tensor<2x6x3x5xf32>, tensor<6x2x3x2xf32>) -> tensor<2x4x7x6xf32>
  %dw = hps.conv_grad_filter %x, %dy {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 2>, group = 2 : i64} : (tensor<2x4x7x6xf32>, tensor<2x6x3x5xf32>) -> tensor<6x2x3x2xf32>
  %y, %hl, %cl = hps.recurrence %p, %r, %rb, %h0 lengths %lens initial_c %c0 {activations = ["Sigmoid", "Relu", "Tanh"], cell = "lstm", clip = 2.5 : f32, reverse} : (tensor<5x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> (tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  hps.send %dx to "o0" : tensor<2x4x7x6xf32>
  hps.send %dw to "o1" : tensor<6x2x3x2xf32>
  hps.send %y to "o2" : tensor<5x2x3xf32>
  hps.send %hl to "o3" : tensor<2x3xf32>
  hps.send %cl to "o4" : tensor<2x3xf32>
  return
}
}

// x, w and y of the forward conv (dx is x-shaped, dw w-shaped, dy
// y-shaped), strides, dilations, the begin then the end pads of each
// spatial axis, group, and the layouts of the x- and y-shaped activations
// (plain: the default).
// CHECK: HPS_RUN_ONCE void buildKernels0() {
// CHECK-NEXT: kConvGradInput[0] = std::make_unique<backend::ConvGradInput>(ctx, DType::F32, Shape{2, 4, 7, 6}, Shape{6, 2, 3, 2}, Shape{2, 6, 3, 5}, Shape{2, 1}, Shape{1, 2}, Shape{1, 0}, Shape{0, 1}, 2, ConvLayouts{});
// CHECK-NEXT: kConvGradFilter[0] = std::make_unique<backend::ConvGradFilter>(ctx, DType::F32, Shape{2, 4, 7, 6}, Shape{6, 2, 3, 2}, Shape{2, 6, 3, 5}, Shape{2, 1}, Shape{1, 2}, Shape{1, 0}, Shape{0, 1}, 2, ConvLayouts{});
// cell, steps, batch, hidden, reverse, the activations as named, clip
// (present, 2.5), no linear_before_reset (GRU only), recurrent bias,
// lengths, no peepholes, no fused projection (input 0).
// CHECK-NEXT: kRecurrent[0] = std::make_unique<backend::Recurrent>(ctx, RecurrentParams{RecurrentCell::LSTM, 5, 2, 3, true, {UnaryKind::Sigmoid, UnaryKind::Relu, UnaryKind::Tanh}, true, 2.500000000e+00f, false, true, true, false, 0});
// CHECK-NEXT: {{^ *[}]$}}

// Stage inputs in0..in3 are dy, x, p, lens; the weights lie 64-byte
// aligned in declaration order (w 0, r 320, rb 512, h0 576, c0 640).
// Nothing in the run is guarded (this is no trained module).
// CHECK-NOT: evaluating
// ConvGradInput: dy, the filter, dx.
// CHECK: kConvGradInput[0]->run(static_cast<const void *>(in0), static_cast<const void *>((weights + 0)), out0);
// ConvGradFilter: x, dy, dw.
// CHECK-NEXT: kConvGradFilter[0]->run(static_cast<const void *>(in1), static_cast<const void *>(in0), out1);
// projected, r, rb, lengths, h0, c0, peepholes (none), then y, hLast,
// cLast, then the fused projection's inputWeights and inputBias (none).
// CHECK-NEXT: kRecurrent[0]->run(static_cast<const void *>(in2), static_cast<const void *>((weights + 320)), static_cast<const void *>((weights + 512)), static_cast<const void *>(in3), static_cast<const void *>((weights + 576)), static_cast<const void *>((weights + 640)), nullptr, out2, out3, out4, nullptr, nullptr);
