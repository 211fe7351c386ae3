// RUN: heterps-opt --hps-partition --hps-verify-partition --hps-outline-pass-keys --hps-verify-partition %s | FileCheck %s

// The ids of a pull on the GPU are computed partly in the CPU stage before
// it: the slice follows the channel between them back to the graph input.
// Every copied op runs on the host CPU, whatever its stage's device.
// The table "emb" is pulled twice, with different ids, so it is listed
// twice; a frozen weight on the slice is copied with it. The first graph
// input is not read.
module attributes {hps.training = {label = "label", loss = "mse", optimizer = "sgd", prediction = "p"}, hps.plan = {stages = [
    {device = #hps.device<"cpu.xeon">, replicas = 1 : i64},
    {device = #hps.device<"gpu.v100">, replicas = 1 : i64}]}} {
func.func @main(%dense: tensor<4x2xf32>, %sparse: tensor<4x3xi64>, %label: tensor<4x2xf32>) -> tensor<4xf32> {
  %emb = hps.weight "emb" {hps.trainable} dense<0.1> : tensor<64x2xf32>
  %shift = hps.weight "shift" dense<[1, 2, 3]> : tensor<3xi64>
  %c = hps.constant dense<32> : tensor<i64>
  %a = hps.add %sparse, %shift {device = #hps.device<"cpu.xeon">} : tensor<4x3xi64>, tensor<3xi64> -> tensor<4x3xi64>
  %e0 = hps.embedding_lookup %emb, %a {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<64x2xf32>, tensor<4x3xi64>) -> tensor<4x2xf32>
  %x = hps.add %e0, %dense {device = #hps.device<"gpu.v100">} : tensor<4x2xf32>
  %b = hps.add %a, %c {device = #hps.device<"gpu.v100">} : tensor<4x3xi64>, tensor<i64> -> tensor<4x3xi64>
  %e1 = hps.embedding_lookup %emb, %b {pooling = #hps<embedding_pooling sum>, device = #hps.device<"gpu.v100">} : (tensor<64x2xf32>, tensor<4x3xi64>) -> tensor<4x2xf32>
  %y = hps.add %x, %e1 {device = #hps.device<"gpu.v100">} : tensor<4x2xf32>
  %loss = hps.loss mse %y, %label {device = #hps.device<"gpu.v100">} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK-LABEL: func.func @stage_0()
// CHECK: %[[A0:.*]] = hps.add
// CHECK: hps.ps_pull "emb"[%[[A0]]]
// CHECK-LABEL: func.func @stage_1()
// CHECK-SAME: hps.device = #hps.device<"gpu.v100">
// CHECK: %[[B1:.*]] = hps.add %{{.*}}, %{{.*}} {device = #hps.device<"gpu.v100">} : tensor<4x3xi64>, tensor<i64>
// CHECK: hps.ps_pull "emb"[%[[B1]]]

// CHECK-LABEL: func.func @pass_keys()
// CHECK-SAME: attributes {hps.device = #hps.device<"cpu.host">, hps.pass_key_inputs = array<i64: 1>, hps.pass_keys = ["emb", "emb"]}
// CHECK-NEXT: %[[SPARSE:.*]] = hps.recv "pass_keys.in0" : tensor<4x3xi64>
// CHECK-NEXT: %[[SHIFT:.*]] = hps.weight "shift"
// CHECK-NEXT: %[[A:.*]] = hps.add %[[SPARSE]], %[[SHIFT]] {device = #hps.device<"cpu.host">}
// CHECK-NEXT: %[[C:.*]] = hps.constant dense<32>
// CHECK-NEXT: %[[B:.*]] = hps.add %[[A]], %[[C]] {device = #hps.device<"cpu.host">}
// CHECK-NEXT: hps.send %[[A]] to "pass_keys.out0"
// CHECK-NEXT: hps.send %[[B]] to "pass_keys.out1"
// CHECK-NEXT: return
