// RUN: heterps-opt --hps-pack-weights %s | FileCheck %s

// Stages in pipeline order (stage_1 first here), each one contiguous share
// of weights.bin, every entry 64-byte aligned, in op order: a frozen weight
// read twice under one name is stored once; a static shape's extents are
// i64s; a trained weight is the parameter server's and gets no place.
module attributes {hps.training = {label = "y", loss = "mse", optimizer = "sgd", prediction = "p"}} {
func.func @main() attributes {hps.pipeline = [@stage_1, @stage_0]} {
  return
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">} {
  %w = hps.weight "w" dense<1.0> : tensor<3xf32>
  %t = hps.weight "t" {hps.trainable} dense<1.0> : tensor<4xf32>
  %c = hps.constant dense<[1, 2]> : tensor<2xi8>
  %w2 = hps.weight "w" dense<1.0> : tensor<3xf32>
  return
}
func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">} {
  %x = hps.recv "c0" : tensor<2x5xf32>
  %s = hps.shape %x : (tensor<2x5xf32>) -> tensor<2xi64>
  %m = hps.constant dense<true> : tensor<100xi1>
  return
}
}

// CHECK-LABEL: func.func @stage_0()
// CHECK-SAME:    hpsrt.weights_range = array<i64: 192, 258>
// CHECK-NEXT:    hps.weight "w" {{.*}}hpsrt.weights_offset = 192
// CHECK-NEXT:    hps.weight "t"
// CHECK-NOT:     weights_offset
// CHECK-SAME:    tensor<4xf32>
// CHECK-NEXT:    hps.constant {{.*}}hpsrt.weights_offset = 256
// CHECK-NEXT:    hps.weight "w" {{.*}}hpsrt.weights_offset = 192
// CHECK-LABEL: func.func @stage_1()
// CHECK-SAME:    hpsrt.weights_range = array<i64: 0, 164>
// CHECK:         hps.shape {{.*}}hpsrt.weights_offset = 0
// CHECK-NEXT:    hps.constant {{.*}}hpsrt.weights_offset = 64
