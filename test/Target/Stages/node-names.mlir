// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --input-file %t/stage_0.cpp
// RUN: heterps build %t

// Each op's statements first name the ONNX node it came from (the
// importer's NameLoc, also inside a FusedLoc), once per change of node, so
// that a kernel's error names the node (rethrowAtNode). Names are C++
// string literals: quotes, backslashes and non-ASCII bytes as octal.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<8x16xf32> {hps.name = "x", hps.batched}) -> (tensor<8x4xf32> {hps.name = "out", hps.batched}) attributes {hps.batch = 8 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<8x16xf32>
  %r = hps.recv "c1" : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<8x16xf32>
  %w = hps.weight "fc.w" dense<0.5> : tensor<16x4xf32> loc("fc.w")
  %h = hps.gemm %x, %w {device = #hps.device<"cpu.xeon">} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32> loc("fc \"1\" \\ é")
  %s = hps.softmax %h {axis = 1 : i64, device = #hps.device<"cpu.xeon">} : (tensor<8x4xf32>) -> tensor<8x4xf32> loc(fused["softmax_0", "elsewhere.mlir":3:4])
  %t = hps.softmax %s {axis = 1 : i64, device = #hps.device<"cpu.xeon">} : (tensor<8x4xf32>) -> tensor<8x4xf32> loc("softmax_0")
  hps.send %t to "c1" : tensor<8x4xf32>
  return
}
}

// The constructor builds the kernels under the same marks.
// CHECK:      try {
// CHECK:      } catch (const std::exception &error) {
// CHECK-NEXT:   rethrowAtNode(node, error);
// CHECK:      node = "fc \0421\042 \134 \303\251";
// CHECK-NEXT: kGemm[0] =
// CHECK:      node = "softmax_0";
// CHECK-NEXT: kSoftmax[0] =
// CHECK-NOT:  node = "softmax_0";
// CHECK-NEXT: kSoftmax[1] =

// CHECK:      void run(
// CHECK:      node = nullptr;
// CHECK:      try {
// CHECK:      node = "fc \0421\042 \134 \303\251";
// CHECK-NEXT: kGemm[0]->run(
// CHECK:      node = "softmax_0";
// CHECK-NEXT: kSoftmax[0]->run(
// CHECK-NEXT: kSoftmax[1]->run(
// CHECK:      } catch (const std::exception &error) {
// CHECK-NEXT:   rethrowAtNode(node, error);
