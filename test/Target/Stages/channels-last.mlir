// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --input-file %t/stage_0.cpp

// Between quantized convs (u8 x) the activations stay channels-last, the
// layout oneDNN's int8 kernels run in, of any channel count: the first conv
// reads the plain stage input and writes its i32 sums channels-last, the
// requantization loop reads them and writes u8 and f32 channels-last (one
// block of all 24 channels, the per-channel scale read by channel), the
// second conv reads that u8 as it is. Its sums feed a loop writing a stage
// output, which is plain: that conv writes plain, and the loop reads the
// f32 it shares with the pooling (a plain reader) through one plain copy.
// CHECK-LABEL: struct FusedLoop0 {
// CHECK:         kRows = 128, kInner = 24;
// CHECK:         const int32_t x0 = static_cast<const int32_t *>(p0)[i0 * 24 + j];
// CHECK-NEXT:    const float x1 = static_cast<const float *>(p1)[j];
// CHECK:         static_cast<uint8_t *>(p3)[i0 * 24 + j] = v4;
// CHECK-LABEL: struct FusedLoop1 {
// CHECK:         const float x1 = static_cast<const float *>(p1)[i1];
// CHECK-LABEL: struct Stage {
// CHECK:       kIntegerConv[0] = std::make_unique<backend::IntegerConv>({{.*}}, 1, true, ConvLayouts{Layout::Plain, Layout::ChannelsLast});
// CHECK-NEXT:  kRelayout[0] = std::make_unique<backend::Relayout>(ctx, DType::F32, Shape{2, 24, 8, 8}, Layout::ChannelsLast, Layout::Plain);
// CHECK-NEXT:  kIntegerConv[1] = std::make_unique<backend::IntegerConv>({{.*}}, 1, true, ConvLayouts{Layout::ChannelsLast});
// CHECK:       kIntegerConv[0]->run(static_cast<const void *>(in0), {{.*}}, (arena + [[ACC0:[0-9]+]]));
// CHECK-NEXT:  backend::forEachElement(ctx, FusedLoop0{static_cast<const void *>((arena + [[ACC0]])), {{.*}}, static_cast<void *>((arena + [[F0:[0-9]+]])), static_cast<void *>((arena + [[Q0:[0-9]+]]))});
// CHECK-NEXT:  kRelayout[0]->run(static_cast<const void *>((arena + [[F0]])), (arena + [[COPY:[0-9]+]]));
// CHECK-NEXT:  kIntegerConv[1]->run(static_cast<const void *>((arena + [[Q0]])),
// CHECK-NEXT:  backend::forEachElement(ctx, FusedLoop1{{.*}}static_cast<const void *>((arena + [[COPY]])), static_cast<void *>(out0)});
// CHECK-NEXT:  kGlobalPool[0]->run(static_cast<const void *>((arena + [[COPY]])), out1);

// When the second loop's output goes to a pooling instead (a plain reader,
// no stage output), the loop still runs channels-last: dropping it to plain
// would cost a reorder for each of its two held inputs, keeping it one
// plain copy of its output.
// RUN: heterps-translate --hps-to-stages %S/Inputs/channels-last-pooled.mlir -o %t.pooled
// RUN: FileCheck %s --check-prefix=POOLED --input-file %t.pooled/stage_0.cpp
// POOLED-LABEL: struct FusedLoop1 {
// POOLED:         const float x2 = static_cast<const float *>(p2)[i0 * 24 + j];
// POOLED:         static_cast<float *>(p3)[i0 * 24 + j] = v4;
// POOLED:       kIntegerConv[1] = std::make_unique<backend::IntegerConv>({{.*}}ConvLayouts{Layout::ChannelsLast, Layout::ChannelsLast});
// POOLED:       kIntegerConv[1]->run(
// POOLED-NEXT:  backend::forEachElement(ctx, FusedLoop1{{.*}}, static_cast<void *>((arena + [[OUT:[0-9]+]]))});
// POOLED-NEXT:  kRelayout[1]->run(static_cast<const void *>((arena + [[OUT]])), (arena + [[COPY:[0-9]+]]));
// POOLED-NEXT:  kGlobalPool[0]->run(static_cast<const void *>((arena + [[COPY]])), out0);

module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x8x8xui8> {hps.name = "x", hps.batched}) -> (tensor<2x24x8x8xui8> {hps.name = "y", hps.batched}, tensor<2x24x1x1xf32> {hps.name = "p", hps.batched}) attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<2x3x8x8xui8>
  %y = hps.recv "c1" : tensor<2x24x8x8xui8>
  %p = hps.recv "c2" : tensor<2x24x1x1xf32>
  return %y, %p : tensor<2x24x8x8xui8>, tensor<2x24x1x1xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x8x8xui8>
  %w0 = hps.constant dense<3> : tensor<24x3x3x3xi8>
  %w1 = hps.constant dense<-2> : tensor<24x24x3x3xi8>
  %b = hps.constant dense<-7> : tensor<24xi32>
  %scale = hps.constant dense<0.01> : tensor<1x24x1x1xf32>
  %acc0 = hps.conv %x, %w0, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xui8>, tensor<24x3x3x3xi8>, tensor<24xi32>) -> tensor<2x24x8x8xi32>
  %f0 = hps.cast %acc0 : (tensor<2x24x8x8xi32>) -> tensor<2x24x8x8xf32>
  %m0 = hps.mul %f0, %scale : tensor<2x24x8x8xf32>, tensor<1x24x1x1xf32> -> tensor<2x24x8x8xf32>
  %r0 = hps.round %m0 : tensor<2x24x8x8xf32>
  %c0 = hps.clip %r0 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<2x24x8x8xf32>
  %q0 = hps.cast %c0 : (tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xui8>
  %acc1 = hps.conv %q0, %w1, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x24x8x8xui8>, tensor<24x24x3x3xi8>, tensor<24xi32>) -> tensor<2x24x8x8xi32>
  %f1 = hps.cast %acc1 : (tensor<2x24x8x8xi32>) -> tensor<2x24x8x8xf32>
  %m1 = hps.mul %f1, %scale : tensor<2x24x8x8xf32>, tensor<1x24x1x1xf32> -> tensor<2x24x8x8xf32>
  %s = hps.add %m1, %c0 : tensor<2x24x8x8xf32>
  %r1 = hps.round %s : tensor<2x24x8x8xf32>
  %c1 = hps.clip %r1 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<2x24x8x8xf32>
  %y = hps.cast %c1 : (tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xui8>
  %p = hps.global_avg_pool %c0 : (tensor<2x24x8x8xf32>) -> tensor<2x24x1x1xf32>
  hps.send %y to "c1" : tensor<2x24x8x8xui8>
  hps.send %p to "c2" : tensor<2x24x1x1xf32>
  return
}
}
