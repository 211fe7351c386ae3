// RUN: heterps-opt --hps-partition --hps-verify-partition --hps-outline-pass-keys --hps-verify-partition %s | FileCheck %s

// A CTR model: the ids are the sparse input plus the fields' offsets, and
// two tables (the embedding and the wide part) are pulled with them, so the
// pass-key program receives the one input it reads, computes the ids once
// and sends them once per pull. A third table is pulled with an input as it
// is. The pushes of the backward stage read the same ids over a channel and
// change nothing here. The program comes after the stages, and
// --hps-verify-partition still passes with it in the module.
module attributes {hps.training = {label = "label", loss = "bce", optimizer = "sgd", prediction = "p"}, hps.plan = {stages = [
    {device = #hps.device<"cpu.xeon">, replicas = 2 : i64},
    {device = #hps.device<"gpu.v100">, replicas = 1 : i64}]}} {
func.func @main(%dense: tensor<4x2xf32>, %sparse: tensor<4x3xi64>, %raw: tensor<4x1xi64>, %label: tensor<4x1xf32>) -> tensor<4xf32> {
  %off = hps.constant dense<[0, 10, 20]> : tensor<3xi64>
  %emb = hps.weight "emb" {hps.trainable} dense<0.1> : tensor<30x2xf32>
  %wide = hps.weight "wide" {hps.trainable} dense<0.2> : tensor<30x1xf32>
  %rawt = hps.weight "raw" {hps.trainable} dense<0.3> : tensor<8x1xf32>
  %ids = hps.add %sparse, %off {device = #hps.device<"cpu.xeon">} : tensor<4x3xi64>, tensor<3xi64> -> tensor<4x3xi64>
  %e = hps.embedding_lookup %emb, %ids {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<30x2xf32>, tensor<4x3xi64>) -> tensor<4x2xf32>
  %wd = hps.embedding_lookup %wide, %ids {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<30x1xf32>, tensor<4x3xi64>) -> tensor<4x1xf32>
  %r = hps.embedding_lookup %rawt, %raw {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<8x1xf32>, tensor<4x1xi64>) -> tensor<4x1xf32>
  %s = hps.add %e, %dense {device = #hps.device<"gpu.v100">} : tensor<4x2xf32>
  %h = hps.reduce sum %s {axes = array<i64: 1>, keepdims, device = #hps.device<"gpu.v100">} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %z0 = hps.add %h, %wd {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>
  %z = hps.add %z0, %r {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>
  %loss = hps.loss bce %z, %label {from_logits, device = #hps.device<"gpu.v100">} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4xf32>
  %seed = hps.loss_grad bce %z, %label {from_logits, device = #hps.device<"gpu.v100">} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %g = hps.unsqueeze %seed {axes = array<i64: 1>, device = #hps.device<"cpu.xeon">} : (tensor<4x1xf32>) -> tensor<4x1x1xf32>
  %gw = hps.expand %g {shape = array<i64: 4, 3, 1>, device = #hps.device<"cpu.xeon">} : (tensor<4x1x1xf32>) -> tensor<4x3x1xf32>
  hps.ps_push "wide"[%ids], %gw {device = #hps.device<"cpu.xeon">} : tensor<4x3xi64>, tensor<4x3x1xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK-LABEL: func.func @stage_0()
// CHECK: hps.ps_pull "emb"
// CHECK: hps.ps_pull "wide"
// CHECK: hps.ps_pull "raw"
// CHECK-LABEL: func.func @stage_1()
// CHECK-LABEL: func.func @stage_2()
// CHECK: hps.ps_push "wide"

// CHECK-LABEL: func.func @pass_keys()
// CHECK-SAME: attributes {hps.device = #hps.device<"cpu.host">, hps.pass_key_inputs = array<i64: 1, 2>, hps.pass_keys = ["emb", "wide", "raw"]}
// CHECK-NEXT: %[[SPARSE:.*]] = hps.recv "pass_keys.in0" : tensor<4x3xi64>
// CHECK-NEXT: %[[RAW:.*]] = hps.recv "pass_keys.in1" : tensor<4x1xi64>
// CHECK-NEXT: %[[OFF:.*]] = hps.constant dense<[0, 10, 20]> : tensor<3xi64>
// CHECK-NEXT: %[[IDS:.*]] = hps.add %[[SPARSE]], %[[OFF]] {device = #hps.device<"cpu.host">}
// CHECK-NEXT: hps.send %[[IDS]] to "pass_keys.out0" : tensor<4x3xi64>
// CHECK-NEXT: hps.send %[[IDS]] to "pass_keys.out1" : tensor<4x3xi64>
// CHECK-NEXT: hps.send %[[RAW]] to "pass_keys.out2" : tensor<4x1xi64>
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @parameter_server()
