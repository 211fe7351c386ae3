// RUN: heterps-translate --hps-to-stage-programs %s | FileCheck %s

// The construction and the run of each data-movement kernel class, with
// every argument spelled out (a change of argument order shows here):
// Concat, Split, Slice, Transpose, Expand, Pad, Gather and Scatter. Concat
// and Split run on arrays of pointers, each in a block of its own. Negative
// axes reach the kernels normalized.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%a: tensor<2x3x4xf32> {hps.name = "a", hps.batched}, %i: tensor<3xi64> {hps.name = "i"})
    -> (tensor<2x5x4xf32> {hps.name = "cat", hps.batched}, tensor<2x3x1xf32> {hps.name = "s0", hps.batched}, tensor<2x3x3xf32> {hps.name = "s1", hps.batched},
        tensor<2x3x2xf32> {hps.name = "sl", hps.batched}, tensor<4x2x3xf32> {hps.name = "tr"}, tensor<2x3x4xf32> {hps.name = "ex", hps.batched},
        tensor<2x4x7xf32> {hps.name = "pd", hps.batched}, tensor<2x3x4xf32> {hps.name = "ga", hps.batched}, tensor<2x5x4xf32> {hps.name = "sc", hps.batched})
    attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %a to "c0" : tensor<2x3x4xf32>
  hps.send %i to "c1" : tensor<3xi64>
  %cat = hps.recv "o0" : tensor<2x5x4xf32>
  %s0 = hps.recv "o1" : tensor<2x3x1xf32>
  %s1 = hps.recv "o2" : tensor<2x3x3xf32>
  %sl = hps.recv "o3" : tensor<2x3x2xf32>
  %tr = hps.recv "o4" : tensor<4x2x3xf32>
  %ex = hps.recv "o5" : tensor<2x3x4xf32>
  %pd = hps.recv "o6" : tensor<2x4x7xf32>
  %ga = hps.recv "o7" : tensor<2x3x4xf32>
  %sc = hps.recv "o8" : tensor<2x5x4xf32>
  return %cat, %s0, %s1, %sl, %tr, %ex, %pd, %ga, %sc : tensor<2x5x4xf32>, tensor<2x3x1xf32>, tensor<2x3x3xf32>, tensor<2x3x2xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<2x4x7xf32>, tensor<2x3x4xf32>, tensor<2x5x4xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %a = hps.recv "c0" : tensor<2x3x4xf32>
  %i = hps.recv "c1" : tensor<3xi64>
  // Weights: 64-byte aligned, at 0, 64, 128 in this order.
  %b = hps.weight "b" dense<0.5> : tensor<2x2x4xf32>
  %e = hps.weight "e" dense<0.25> : tensor<3x1xf32>
  %d = hps.weight "d" dense<0.75> : tensor<2x5x4xf32>
  %cat = hps.concat %a, %b {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<2x2x4xf32>) -> tensor<2x5x4xf32>
  %s:2 = hps.split %a {axis = 2 : i64, sizes = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)
  %sl = hps.slice %a {starts = array<i64: 1>, ends = array<i64: 4>, axes = array<i64: -1>, steps = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
  %tr = hps.transpose %a {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %ex = hps.expand %e {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %pd = hps.pad %a {mode = #hps<pad_mode constant>, pads = array<i64: 0, 1, 0, 0, 0, 3>, value = 1.5 : f32} : (tensor<2x3x4xf32>) -> tensor<2x4x7xf32>
  %ga = hps.gather %d, %i {axis = 1 : i64} : (tensor<2x5x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %sc = hps.scatter %d, %i, %a {axis = -2 : i64, reduction = #hps<scatter_reduction add>} : (tensor<2x5x4xf32>, tensor<3xi64>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  hps.send %cat to "o0" : tensor<2x5x4xf32>
  hps.send %s#0 to "o1" : tensor<2x3x1xf32>
  hps.send %s#1 to "o2" : tensor<2x3x3xf32>
  hps.send %sl to "o3" : tensor<2x3x2xf32>
  hps.send %tr to "o4" : tensor<4x2x3xf32>
  hps.send %ex to "o5" : tensor<2x3x4xf32>
  hps.send %pd to "o6" : tensor<2x4x7xf32>
  hps.send %ga to "o7" : tensor<2x3x4xf32>
  hps.send %sc to "o8" : tensor<2x5x4xf32>
  return
}
}

// CHECK: HPS_RUN_ONCE void buildKernels0() {
// CHECK-NEXT: kConcat[0] = std::make_unique<backend::Concat>(ctx, DType::F32, std::vector<Shape>{Shape{2, 3, 4}, Shape{2, 2, 4}}, 1);
// x, axis, sizes.
// CHECK-NEXT: kSplit[0] = std::make_unique<backend::Split>(ctx, DType::F32, Shape{2, 3, 4}, 2, std::vector<int64_t>{1, 3});
// x, then starts and steps on every axis, then y.
// CHECK-NEXT: kSlice[0] = std::make_unique<backend::Slice>(ctx, DType::F32, Shape{2, 3, 4}, Shape{0, 0, 1}, Shape{1, 1, 2}, Shape{2, 3, 2});
// CHECK-NEXT: kTranspose[0] = std::make_unique<backend::Transpose>(ctx, DType::F32, Shape{2, 3, 4}, std::vector<int64_t>{2, 0, 1});
// CHECK-NEXT: kExpand[0] = std::make_unique<backend::Expand>(ctx, DType::F32, Shape{3, 1}, Shape{2, 3, 4});
// The begin pads, then the end pads; the value as a double.
// CHECK-NEXT: kPad[0] = std::make_unique<backend::Pad>(ctx, DType::F32, Shape{2, 3, 4}, std::vector<int64_t>{0, 1, 0, 0, 0, 3}, PadMode::Constant, 1.500000000e+00);
// data, the indices' type and shape, axis.
// CHECK-NEXT: kGather[0] = std::make_unique<backend::Gather>(ctx, DType::F32, Shape{2, 5, 4}, DType::I64, Shape{3}, 1);
// CHECK-NEXT: kScatter[0] = std::make_unique<backend::Scatter>(ctx, DType::F32, Shape{2, 5, 4}, DType::I64, Shape{3}, 1, ScatterReduction::Add);
// CHECK-NEXT: {{^ *[}]$}}

// Stage inputs: in0 is a, in1 the indices; weights b at 0, e at 64, d at 128.
// CHECK:      {{^ *[{]$}}
// CHECK-NEXT: const void *sources[] = {static_cast<const void *>(in0), static_cast<const void *>((weights + 0))};
// CHECK-NEXT: kConcat[0]->run(sources, out0);
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: {{^ *[{]$}}
// CHECK-NEXT: void *ys[] = {static_cast<void *>(out1), static_cast<void *>(out2)};
// CHECK-NEXT: kSplit[0]->run(static_cast<const void *>(in0), ys);
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: kSlice[0]->run(static_cast<const void *>(in0), out3);
// CHECK-NEXT: kTranspose[0]->run(static_cast<const void *>(in0), out4);
// CHECK-NEXT: kExpand[0]->run(static_cast<const void *>((weights + 64)), out5);
// CHECK-NEXT: kPad[0]->run(static_cast<const void *>(in0), out6);
// data, indices (, updates), y.
// CHECK-NEXT: kGather[0]->run(static_cast<const void *>((weights + 128)), static_cast<const void *>(in1), out7);
// CHECK-NEXT: kScatter[0]->run(static_cast<const void *>((weights + 128)), static_cast<const void *>(in1), static_cast<const void *>(in0), out8);
