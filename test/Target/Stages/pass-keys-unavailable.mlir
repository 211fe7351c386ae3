// RUN: rm -rf %t && heterps-opt --hps-partition --hps-outline-pass-keys %s | heterps-translate --hps-to-stages -o %t
// RUN: FileCheck %s --input-file %t/manifest.json
// RUN: not ls %t/pass_keys.cpp

// Where a pull's ids depend on another pull's rows, the bundle has no
// pass-key program and its manifest says why.
module attributes {hps.training = {label = "label", loss = "mse", optimizer = "sgd", prediction = "p"}} {
func.func @main(%sparse: tensor<4x2xi64> {hps.name = "sparse", hps.batched}, %label: tensor<4x2xf32> {hps.name = "label", hps.batched}) -> (tensor<4xf32> {hps.name = "loss", hps.batched}) attributes {hps.batch = 4 : i64} {
  %t1 = hps.weight "t1" {hps.trainable} dense<1.0> : tensor<8x2xf32>
  %t2 = hps.weight "t2" {hps.trainable} dense<2.0> : tensor<8x2xf32>
  %e = hps.embedding_lookup %t1, %sparse {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<8x2xf32>, tensor<4x2xi64>) -> tensor<4x2xf32> loc("t1_lookup")
  %i = hps.cast %e {device = #hps.device<"cpu.xeon">} : (tensor<4x2xf32>) -> tensor<4x2xi64>
  %e2 = hps.embedding_lookup %t2, %i {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<8x2xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %loss = hps.loss mse %e2, %label {device = #hps.device<"cpu.xeon">} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK:      "pass_keys": {
// CHECK-NEXT:   "unavailable": "ids of table 't2' depend on hps.ps_pull (t1_lookup)"
// CHECK-NEXT: },
