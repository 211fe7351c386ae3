// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --check-prefix=CPU --input-file %t/stage_0.cpp
// RUN: FileCheck %s --check-prefix=GPU --input-file %t/stage_1.cu

// A residual block on each device class. On the CPU the 16-channel tensors
// between the convolutions stay in the native (channel-blocked) layout: the
// stem reads plain x and writes native, the shortcut add and its relu fuse
// into the second conv, the elementwise mul works on native operands, and
// the pooling (a plain reader) gets one plain copy. The 8-channel conv
// cannot hold a native layout and writes plain. On the GPU everything stays
// plain; the residual still fuses.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x8x8xf32> {hps.name = "x", hps.batched}) -> (tensor<2x16x1x1xf32> {hps.name = "p", hps.batched}, tensor<2x8x8x8xf32> {hps.name = "q", hps.batched}, tensor<2x16x1x1xf32> {hps.name = "gp", hps.batched}) attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0, @stage_1]} {
  hps.send %x to "c0" : tensor<2x3x8x8xf32>
  %p = hps.recv "c1" : tensor<2x16x1x1xf32>
  %q = hps.recv "c2" : tensor<2x8x8x8xf32>
  %gp = hps.recv "c3" : tensor<2x16x1x1xf32>
  return %p, %q, %gp : tensor<2x16x1x1xf32>, tensor<2x8x8x8xf32>, tensor<2x16x1x1xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x8x8xf32>
  %w0 = hps.weight "w0" dense<0.1> : tensor<16x3x3x3xf32>
  %w1 = hps.weight "w1" dense<0.2> : tensor<16x16x3x3xf32>
  %w2 = hps.weight "w2" dense<0.3> : tensor<16x16x1x1xf32>
  %w3 = hps.weight "w3" dense<0.4> : tensor<8x16x1x1xf32>
  %b = hps.weight "b" dense<0.5> : tensor<16xf32>
  %c0 = hps.conv %x, %w0, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<2x16x8x8xf32>
  %r0 = hps.relu %c0 : tensor<2x16x8x8xf32>
  %c1 = hps.conv %r0, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %a = hps.add %c1, %r0 : tensor<2x16x8x8xf32>
  %r1 = hps.relu %a : tensor<2x16x8x8xf32>
  %c2 = hps.conv %r1, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x8x8xf32>
  %m = hps.mul %c2, %r1 : tensor<2x16x8x8xf32>
  %p = hps.global_avg_pool %m : (tensor<2x16x8x8xf32>) -> tensor<2x16x1x1xf32>
  %q = hps.conv %m, %w3 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<8x16x1x1xf32>) -> tensor<2x8x8x8xf32>
  hps.send %p to "c1" : tensor<2x16x1x1xf32>
  hps.send %q to "c2" : tensor<2x8x8x8xf32>
  hps.send %x to "c4" : tensor<2x3x8x8xf32>
  return
}
func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">, hps.replicas = 1 : i64, hps.stage = 1 : i64} {
  %x = hps.recv "c4" : tensor<2x3x8x8xf32>
  %w0 = hps.weight "w0" dense<0.1> : tensor<16x3x3x3xf32>
  %w1 = hps.weight "w1" dense<0.2> : tensor<16x16x3x3xf32>
  %c0 = hps.conv %x, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x8x8xf32>
  %c1 = hps.conv %c0, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %a = hps.add %c0, %c1 : tensor<2x16x8x8xf32>
  %r = hps.relu %a : tensor<2x16x8x8xf32>
  %gp = hps.global_avg_pool %r : (tensor<2x16x8x8xf32>) -> tensor<2x16x1x1xf32>
  hps.send %gp to "c3" : tensor<2x16x1x1xf32>
  return
}
}

// CPU: kConv[0] = std::make_unique<backend::Conv>({{.*}}Activation{UnaryKind::Relu}, true, ConvOptions{Layout::Plain, Layout::Native});
// CPU-NEXT: kConv[1] = std::make_unique<backend::Conv>({{.*}}Activation{UnaryKind::Relu}, true, ConvOptions{Layout::Native, Layout::Native, true});
// CPU-NEXT: kConv[2] = std::make_unique<backend::Conv>({{.*}}Activation{}, true, ConvOptions{Layout::Native, Layout::Native});
// CPU-NEXT: kBinary[0] = std::make_unique<backend::Binary>(ctx, BinaryKind::Mul
// CPU-NEXT: kRelayout[0] = std::make_unique<backend::Relayout>(ctx, DType::F32, Shape{2, 16, 8, 8}, Layout::Native, Layout::Plain);
// CPU-NEXT: kGlobalPool[0] = std::make_unique<backend::GlobalPool>
// CPU-NEXT: kConv[3] = std::make_unique<backend::Conv>({{.*}}ConvOptions{Layout::Native});
// CPU-NOT: backend::Unary
// CPU: kConv[0]->run(static_cast<const void *>(in0), {{.*}}, (arena + [[R0:[0-9]+]]), nullptr);
// CPU-NEXT: kConv[1]->run(static_cast<const void *>((arena + [[R0]])), {{.*}}, nullptr, (arena + [[R1:[0-9]+]]), static_cast<const void *>((arena + [[R0]])));
// CPU-NEXT: kConv[2]->run(static_cast<const void *>((arena + [[R1]])), {{.*}}, (arena + [[C2:[0-9]+]]), nullptr);
// CPU-NEXT: kBinary[0]->run(static_cast<const void *>((arena + [[C2]])), static_cast<const void *>((arena + [[R1]])), (arena + [[M:[0-9]+]]));
// CPU-NEXT: kRelayout[0]->run(static_cast<const void *>((arena + [[M]])), (arena + [[COPY:[0-9]+]]));
// CPU-NEXT: kGlobalPool[0]->run(static_cast<const void *>((arena + [[COPY]])), out0);
// CPU-NEXT: kConv[3]->run(static_cast<const void *>((arena + [[M]])), {{.*}}, out1, nullptr);

// GPU: kConv[0] = std::make_unique<backend::Conv>({{.*}}ConvOptions{});
// GPU-NEXT: kConv[1] = std::make_unique<backend::Conv>({{.*}}Activation{UnaryKind::Relu}, true, ConvOptions{Layout::Plain, Layout::Plain, true});
// GPU-NOT: Relayout
// GPU-NOT: backend::Binary

// A view of another shape (a reshape between two convs) orders the blocked
// elements differently: the conv after it reads a plain copy.
// RUN: heterps-translate --hps-to-stages %S/Inputs/layouts-view.mlir -o %t.view
// RUN: FileCheck %s --check-prefix=VIEW --input-file %t.view/stage_0.cpp
// VIEW: kConv[0] = std::make_unique<backend::Conv>({{.*}}ConvOptions{Layout::Plain, Layout::Native});
// VIEW-NEXT: kRelayout[0] = std::make_unique<backend::Relayout>(ctx, DType::F32, Shape{2, 16, 8, 8}, Layout::Native, Layout::Plain);
// VIEW-NEXT: kConv[1] = std::make_unique<backend::Conv>(ctx, DType::F32, Shape{2, 16, 4, 16}{{.*}}ConvOptions{});
// VIEW-NEXT: kConv[2] = std::make_unique<backend::Conv>({{.*}}ConvOptions{Layout::Native});
