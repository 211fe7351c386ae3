// RUN: heterps-opt --hps-partition --hps-verify-partition %s | FileCheck %s

// The reverse sweep interleaves two parallel branches on different devices
// op by op (cpu, gpu, cpu, gpu), and moves each push up to its gradient.
// Partition groups the backward ops by device where their operands allow:
// two forward stages, the loss stage, one backward stage on the GPU (the
// plan's 3 stages plus 1, not one stage per device change).
module attributes {hps.training = {label = "label", loss = "bce", optimizer = "sgd", prediction = "p"}, hps.plan = {stages = [
    {device = #hps.device<"cpu.xeon">, replicas = 1 : i64},
    {device = #hps.device<"gpu.v100">, replicas = 2 : i64},
    {device = #hps.device<"cpu.xeon">, replicas = 1 : i64}]}} {
func.func @main(%x: tensor<4x1xf32>, %label: tensor<4x1xf32>) -> tensor<4xf32> {
  %wa = hps.weight "wa" dense<0.5> : tensor<4x1xf32>
  %wb = hps.weight "wb" dense<0.25> : tensor<4x1xf32>
  %a = hps.mul %x, %wa {device = #hps.device<"cpu.xeon">} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %b = hps.mul %x, %wb {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %z = hps.add %a, %b {device = #hps.device<"cpu.xeon">} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %loss = hps.loss bce %z, %label {from_logits, device = #hps.device<"cpu.xeon">} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4xf32>
  %seed = hps.loss_grad bce %z, %label {from_logits, device = #hps.device<"cpu.xeon">} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %ga = hps.mul %seed, %x {device = #hps.device<"cpu.xeon">} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %gb = hps.mul %seed, %x {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %ga2 = hps.relu %ga {device = #hps.device<"cpu.xeon">} : tensor<4x1xf32>
  %gb2 = hps.relu %gb {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>
  hps.dense_push "wa", %ga2 {device = #hps.device<"cpu.xeon">} : tensor<4x1xf32>
  hps.dense_push "wb", %gb2 {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>
  return %loss : tensor<4xf32>
}
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: hps.pipeline = [@stage_0, @stage_1, @stage_2, @stage_3]
// CHECK: func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">
// CHECK: func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">
// The loss gradient and everything after it is marked hps.backward (an
// evaluating run skips those); the forward ops before it are not.
// CHECK: func.func @stage_2() attributes {hps.device = #hps.device<"cpu.xeon">
// CHECK: hps.add
// CHECK-NOT: hps.backward
// CHECK-SAME: {device = #hps.device<"cpu.xeon">}
// CHECK: hps.loss bce
// CHECK-NOT: hps.backward
// CHECK-SAME: {device = #hps.device<"cpu.xeon">, from_logits}
// CHECK: hps.loss_grad {{.*}}hps.backward
// CHECK: hps.relu {{.*}}hps.backward
// CHECK: hps.dense_push "wa"{{.*}}hps.backward
// CHECK: func.func @stage_3() attributes {hps.device = #hps.device<"gpu.v100">, hps.replicas = 2
// CHECK: hps.relu {{.*}}hps.backward
// CHECK: hps.dense_push "wb"{{.*}}hps.backward
// CHECK-NOT: func.func @stage_4
