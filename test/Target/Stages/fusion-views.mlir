// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --input-file %t/stage_0.cpp

// A view (unsqueeze) of an activation fused into its gemm reads the gemm's
// storage: the fused tanh has none of its own.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<4x8xf32> {hps.name = "x", hps.batched}) -> (tensor<4x1x3xf32> {hps.name = "y", hps.batched}) attributes {hps.batch = 4 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<4x8xf32>
  %y = hps.recv "c1" : tensor<4x1x3xf32>
  return %y : tensor<4x1x3xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<4x8xf32>
  %w = hps.weight "w" dense<0.5> : tensor<8x3xf32>
  %s = hps.weight "s" dense<2.0> : tensor<4x1x3xf32>
  %h = hps.gemm %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %t = hps.tanh %h : tensor<4x3xf32>
  %u = hps.unsqueeze %t {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
  %y = hps.mul %u, %s : tensor<4x1x3xf32>
  hps.send %y to "c1" : tensor<4x1x3xf32>
  return
}
}

// CHECK: kGemm[0] = std::make_unique<backend::Gemm>({{.*}}Activation{UnaryKind::Tanh
// CHECK-NOT: backend::Unary
// CHECK: kGemm[0]->run(static_cast<const void *>(in0), {{.*}}, (arena + [[H:[0-9]+]]));
// CHECK-NEXT: kBinary[0]->run(static_cast<const void *>((arena + [[H]])), static_cast<const void *>((weights + {{[0-9]+}})), out0);
