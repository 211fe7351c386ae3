// RUN: heterps-opt --hps-partition --hps-verify-partition %s | FileCheck %s

// Three stages (cpu, gpu, cpu): a skip connection from stage 0 goes straight
// to stage 2 on its own channel; the embedding table stays in the parameter
// server and the lookup becomes a pull; weights go with their users.
module attributes {hps.plan = {stages = [
    {device = #hps.device<"cpu.xeon">, replicas = 4 : i64},
    {device = #hps.device<"gpu.v100">, replicas = 2 : i64},
    {device = #hps.device<"cpu.xeon">, replicas = 1 : i64}]}} {
func.func @main(%ids: tensor<8x3xi64>, %dense: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<2xi64>) {
  %t = hps.weight "table" dense<0.5> : tensor<1000x16xf32>
  %w = hps.weight "fc.w" dense<0.1> : tensor<16x16xf32>
  %c = hps.constant dense<[8, 16]> : tensor<2xi64>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling sum>, device = #hps.device<"cpu.xeon">} : (tensor<1000x16xf32>, tensor<8x3xi64>) -> tensor<8x16xf32>
  %s = hps.add %e, %dense {device = #hps.device<"cpu.xeon">} : tensor<8x16xf32>
  %h = hps.gemm %s, %w {device = #hps.device<"gpu.v100">} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %r = hps.relu %h {device = #hps.device<"gpu.v100">} : tensor<8x16xf32>
  %o = hps.add %r, %s {device = #hps.device<"cpu.xeon">} : tensor<8x16xf32>
  return %o, %c : tensor<8x16xf32>, tensor<2xi64>
}
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: attributes {hps.pipeline = [@stage_0, @stage_1, @stage_2]}
// CHECK-DAG: hps.send %arg0 to "[[IDS:.*]]" : tensor<8x3xi64>
// CHECK-DAG: hps.send %arg1 to "[[DENSE:.*]]" : tensor<8x16xf32>
// CHECK-DAG: %[[OUT:.*]] = hps.recv "[[RESULT:.*]]" : tensor<8x16xf32>
// CHECK-DAG: %[[C:.*]] = hps.constant dense<[8, 16]>
// CHECK: return %[[OUT]], %[[C]]
// CHECK-NOT: hps.gemm

// CHECK-LABEL: func.func @stage_0()
// CHECK-SAME: hps.device = #hps.device<"cpu.xeon">, hps.replicas = 4 : i64, hps.stage = 0 : i64
// CHECK: %[[I:.*]] = hps.recv "[[IDS]]"
// CHECK: %[[E:.*]] = hps.ps_pull "table"[%[[I]]] {device = #hps.device<"cpu.xeon">, pooling = #hps<embedding_pooling sum>, table_type = tensor<1000x16xf32>}
// CHECK: %[[D:.*]] = hps.recv "[[DENSE]]"
// CHECK: %[[S:.*]] = hps.add %[[E]], %[[D]]
// CHECK-DAG: hps.send %[[S]] to "[[TO1:.*]]"
// CHECK-DAG: hps.send %[[S]] to "[[TO2:.*]]"
// CHECK-NOT: hps.weight "table"

// CHECK-LABEL: func.func @stage_1()
// CHECK-SAME: hps.device = #hps.device<"gpu.v100">, hps.replicas = 2 : i64, hps.stage = 1 : i64
// CHECK: hps.recv "[[TO1]]"
// CHECK: hps.weight "fc.w"
// CHECK: hps.gemm
// CHECK: %[[R:.*]] = hps.relu
// CHECK: hps.send %[[R]] to "[[TO2B:.*]]"

// CHECK-LABEL: func.func @stage_2()
// CHECK-SAME: hps.stage = 2 : i64
// CHECK-DAG: %[[A:.*]] = hps.recv "[[TO2B]]"
// CHECK-DAG: %[[B:.*]] = hps.recv "[[TO2]]"
// CHECK: %[[O:.*]] = hps.add %[[A]], %[[B]]
// CHECK: hps.send %[[O]] to "[[RESULT]]"
