// RUN: heterps-opt --hps-partition -verify-diagnostics %s

// A Loop that legalization left generic (run-time trip count) reads %w from
// the outer scope, which is not an operand: a stage boundary would cut it,
// so partitioning refuses it.
module attributes {hps.plan = {stages = [
    {device = #hps.device<"cpu.xeon">, replicas = 1 : i64}]}} {
func.func @main(%n: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %w = hps.weight "w" dense<0.5> : tensor<2xf32>
  %none = hps.none
  // expected-error @+1 {{control flow that --hps-legalize-onnx did not resolve cannot be partitioned}}
  %0 = hps.onnx_node "Loop"(%n, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"], device = #hps.device<"cpu.xeon">} : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %1 = hps.mul %acc, %w : tensor<2xf32>
    hps.yield %cond, %1 : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
}
