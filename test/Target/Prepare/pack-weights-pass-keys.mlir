// RUN: heterps-opt --hps-pack-weights %s | FileCheck %s

// The pass-key program's share of weights.bin follows every stage's, even
// where it comes first in the module, so that no stage's share moves.
module attributes {hps.training = {label = "y", loss = "mse", optimizer = "sgd", prediction = "p"}} {
func.func @main() attributes {hps.pipeline = [@stage_0, @stage_1]} {
  return
}
func.func @pass_keys() attributes {hps.device = #hps.device<"cpu.host">, hps.pass_key_inputs = array<i64>, hps.pass_keys = []} {
  %c = hps.constant dense<[1, 2]> : tensor<2xi64>
  return
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">} {
  %c = hps.constant dense<[1, 2, 3]> : tensor<3xi64>
  return
}
func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">} {
  %w = hps.weight "w" dense<1.0> : tensor<3xf32>
  return
}
}

// CHECK-LABEL: func.func @pass_keys()
// CHECK-SAME:    hpsrt.weights_range = array<i64: 128, 144>
// CHECK-NEXT:    hps.constant {{.*}}hpsrt.weights_offset = 128
// CHECK-LABEL: func.func @stage_0()
// CHECK-SAME:    hpsrt.weights_range = array<i64: 0, 24>
// CHECK-LABEL: func.func @stage_1()
// CHECK-SAME:    hpsrt.weights_range = array<i64: 64, 76>
