// RUN: heterps-opt --split-input-file --hps-partition --hps-outline-pass-keys --hps-verify-partition %s | FileCheck %s

// The ids of "t2" are the rows pulled from "t1": they cannot be known
// before the stages run. No program; the module says why (not an error:
// the bundle trains without a pass cache).
module attributes {hps.training = {label = "label", loss = "mse", optimizer = "sgd", prediction = "p"}} {
func.func @main(%sparse: tensor<4x2xi64>, %label: tensor<4x2x2xf32>) -> tensor<4xf32> {
  %t1 = hps.weight "t1" {hps.trainable} dense<1.0> : tensor<8x2xf32>
  %t2 = hps.weight "t2" {hps.trainable} dense<2.0> : tensor<8x2xf32>
  %e = hps.embedding_lookup %t1, %sparse {device = #hps.device<"cpu.xeon">} : (tensor<8x2xf32>, tensor<4x2xi64>) -> tensor<4x2x2xf32> loc("t1_lookup")
  %r = hps.reduce sum %e {axes = array<i64: 2>, device = #hps.device<"cpu.xeon">} : (tensor<4x2x2xf32>) -> tensor<4x2xf32>
  %i = hps.cast %r {device = #hps.device<"cpu.xeon">} : (tensor<4x2xf32>) -> tensor<4x2xi64>
  %e2 = hps.embedding_lookup %t2, %i {device = #hps.device<"cpu.xeon">} : (tensor<8x2xf32>, tensor<4x2xi64>) -> tensor<4x2x2xf32>
  %loss = hps.loss mse %e2, %label {device = #hps.device<"cpu.xeon">} : (tensor<4x2x2xf32>, tensor<4x2x2xf32>) -> tensor<4xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK-LABEL: module attributes {hps.pass_keys_unavailable = "ids of table 't2' depend on hps.ps_pull (t1_lookup)"
// CHECK-NOT: @pass_keys

// -----

// The ids depend on a trained weight: the server changes it.
module attributes {hps.training = {label = "label", loss = "mse", optimizer = "sgd", prediction = "p"}} {
func.func @main(%sparse: tensor<4x2xi64>, %label: tensor<4x2x2xf32>) -> tensor<4xf32> {
  %t = hps.weight "emb" {hps.trainable} dense<1.0> : tensor<8x2xf32>
  %shift = hps.weight "shift" {hps.trainable} dense<[1, 2]> : tensor<2xi64> loc("shift")
  %i = hps.add %sparse, %shift {device = #hps.device<"cpu.xeon">} : tensor<4x2xi64>, tensor<2xi64> -> tensor<4x2xi64>
  %e = hps.embedding_lookup %t, %i {device = #hps.device<"cpu.xeon">} : (tensor<8x2xf32>, tensor<4x2xi64>) -> tensor<4x2x2xf32>
  %loss = hps.loss mse %e, %label {device = #hps.device<"cpu.xeon">} : (tensor<4x2x2xf32>, tensor<4x2x2xf32>) -> tensor<4xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK-LABEL: module attributes {hps.pass_keys_unavailable = "ids of table 'emb' depend on the trained weight 'shift' (shift)"
// CHECK-NOT: @pass_keys

// -----

// An inference module is left as it is, pulls or not.
module {
func.func @main(%sparse: tensor<4x2xi64>) -> tensor<4x2x2xf32> {
  %t = hps.weight "emb" dense<1.0> : tensor<8x2xf32>
  %e = hps.embedding_lookup %t, %sparse {device = #hps.device<"cpu.xeon">} : (tensor<8x2xf32>, tensor<4x2xi64>) -> tensor<4x2x2xf32>
  return %e : tensor<4x2x2xf32>
}
}

// CHECK-LABEL: module {
// CHECK: hps.ps_pull "emb"
// CHECK-NOT: pass_keys

// -----

// A training module without parameter-server tables has nothing to cache.
module attributes {hps.training = {label = "label", loss = "mse", optimizer = "sgd", prediction = "p"}} {
func.func @main(%x: tensor<4x2xf32>, %label: tensor<4x2xf32>) -> tensor<4xf32> {
  %w = hps.weight "w" {hps.trainable} dense<1.0> : tensor<4x2xf32>
  %y = hps.mul %x, %w {device = #hps.device<"cpu.xeon">} : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %loss = hps.loss mse %y, %label {device = #hps.device<"cpu.xeon">} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK-LABEL: module attributes {hps.training
// CHECK-NOT: pass_keys
