// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --input-file %t/stage_0.cpp

// A quantized conv (u8 by i8 into i32) runs as IntegerConv, its constant
// filter repacked once (true), x and y plain (the stage's input and
// output). Its requantization is one loop whose final cast, after the
// saturating clip, goes through int32 (convertClipped), which vectorises; a
// cast of an unclipped float keeps convertValue.
// CHECK-LABEL: struct FusedLoop0 {
// CHECK:         const int32_t x0 = static_cast<const int32_t *>(p0)
// CHECK:         const uint8_t v4 = scalar::convertClipped<uint8_t>(v3);
// CHECK-LABEL: struct FusedLoop1 {
// CHECK:         const int8_t v1 = scalar::convertValue<int8_t>(v0);
// CHECK-LABEL: struct Stage {
// CHECK:       kIntegerConv[0] = std::make_unique<backend::IntegerConv>(ctx, DType::U8, Shape{2, 16, 8, 8}, Shape{16, 16, 3, 3}, true, Shape{2, 16, 8, 8}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, 1, true, ConvLayouts{});
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x16x8x8xui8> {hps.name = "x", hps.batched}, %v: tensor<4x6xf32> {hps.name = "v", hps.batched}) -> (tensor<2x16x8x8xui8> {hps.name = "y", hps.batched}, tensor<4x6xi8> {hps.name = "t", hps.batched}) attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<2x16x8x8xui8>
  hps.send %v to "c1" : tensor<4x6xf32>
  %y = hps.recv "c2" : tensor<2x16x8x8xui8>
  %t = hps.recv "c3" : tensor<4x6xi8>
  return %y, %t : tensor<2x16x8x8xui8>, tensor<4x6xi8>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x16x8x8xui8>
  %v = hps.recv "c1" : tensor<4x6xf32>
  %w = hps.constant dense<3> : tensor<16x16x3x3xi8>
  %b = hps.constant dense<-7> : tensor<16xi32>
  %scale = hps.constant dense<0.01> : tensor<f32>
  %acc = hps.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xui8>, tensor<16x16x3x3xi8>, tensor<16xi32>) -> tensor<2x16x8x8xi32>
  %f = hps.cast %acc : (tensor<2x16x8x8xi32>) -> tensor<2x16x8x8xf32>
  %m = hps.mul %f, %scale : tensor<2x16x8x8xf32>, tensor<f32> -> tensor<2x16x8x8xf32>
  %r = hps.round %m : tensor<2x16x8x8xf32>
  %c = hps.clip %r {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<2x16x8x8xf32>
  %y = hps.cast %c : (tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xui8>
  %n = hps.neg %v : tensor<4x6xf32>
  %t = hps.cast %n : (tensor<4x6xf32>) -> tensor<4x6xi8>
  hps.send %y to "c2" : tensor<2x16x8x8xui8>
  hps.send %t to "c3" : tensor<4x6xi8>
  return
}
}
