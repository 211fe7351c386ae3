// RUN: heterps-opt --hps-form-fused-loops %s -split-input-file | FileCheck %s

// A requantization chain becomes one loop at its last op's place. %a is also
// read before %b runs (by the softmax), so %a cannot wait for the loop: it
// stays a kernel of its own; abs .. where form a second loop, which stores
// only the where's result (the others stay in registers). The reshape is a
// view: it runs no kernel and stays outside.
func.func @stage_0(%c: tensor<2x16x8x8xf32>, %scale: tensor<16x1x1xf32>, %v: tensor<4x6xf32>) -> (tensor<2x16x8x8xf32>, tensor<4x6xf32>, tensor<4x6xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  %half = hps.constant dense<0.5> : tensor<f32>
  %m = hps.mul %c, %scale : tensor<2x16x8x8xf32>, tensor<16x1x1xf32> -> tensor<2x16x8x8xf32>
  %r = hps.round %m : tensor<2x16x8x8xf32>
  %d = hps.mul %r, %half : tensor<2x16x8x8xf32>, tensor<f32> -> tensor<2x16x8x8xf32>
  %a = hps.neg %v : tensor<4x6xf32>
  %s = hps.softmax %a {axis = -1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = hps.abs %a : tensor<4x6xf32>
  %n = hps.neg %b : tensor<4x6xf32>
  %k = hps.greater %b, %v : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xi1>
  %w = hps.where %k, %n, %b : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %d, %s, %w : tensor<2x16x8x8xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[HALF:.*]] = hps.constant
// CHECK-NEXT:    %[[D:.*]] = hpsrt.fused_loop -> tensor<2x16x8x8xf32> {
// CHECK-NEXT:      %[[M:.*]] = hps.mul %arg0, %arg1
// CHECK-NEXT:      %[[R:.*]] = hps.round %[[M]]
// CHECK-NEXT:      %[[DD:.*]] = hps.mul %[[R]], %[[HALF]]
// CHECK-NEXT:      hpsrt.yield %[[DD]] : tensor<2x16x8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[A:.*]] = hps.neg %arg2
// CHECK-NEXT:    %[[S:.*]] = hps.softmax %[[A]]
// CHECK-NEXT:    %[[W:.*]] = hpsrt.fused_loop -> tensor<4x6xf32> {
// CHECK-NEXT:      %[[B:.*]] = hps.abs %[[A]]
// CHECK-NEXT:      %[[N:.*]] = hps.neg %[[B]]
// CHECK-NEXT:      %[[K:.*]] = hps.greater %[[B]], %arg2
// CHECK-NEXT:      %[[WW:.*]] = hps.where %[[K]], %[[N]], %[[B]]
// CHECK-NEXT:      hpsrt.yield %[[WW]] : tensor<4x6xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[D]], %[[S]], %[[W]]

// -----

// Members read outside the loop are stored (yielded, in member order) and
// the readers take the loop's results; a transcendental op (exp) is no
// member: its vector kernel differs from a scalar loop's.
func.func @stage_0(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) attributes {hps.device = #hps.device<"gpu.v100">} {
  %a = hps.neg %x : tensor<8xf32>
  %b = hps.abs %a : tensor<8xf32>
  %c = hps.add %a, %b : tensor<8xf32>
  %e = hps.exp %c : tensor<8xf32>
  return %a, %c, %e : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[L:.*]]:2 = hpsrt.fused_loop -> tensor<8xf32>, tensor<8xf32> {
// CHECK-NEXT:      %[[A:.*]] = hps.neg %arg0
// CHECK-NEXT:      %[[B:.*]] = hps.abs %[[A]]
// CHECK-NEXT:      %[[C:.*]] = hps.add %[[A]], %[[B]]
// CHECK-NEXT:      hpsrt.yield %[[A]], %[[C]] : tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[E:.*]] = hps.exp %[[L]]#1
// CHECK-NEXT:    return %[[L]]#0, %[[L]]#1, %[[E]]

// -----

// Forward and backward ops never share a loop: an evaluating run skips the
// backward ones.
func.func @stage_0(%x: tensor<8xf32>) -> tensor<8xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  %a = hps.neg %x : tensor<8xf32>
  %b = hps.abs %a {hps.backward} : tensor<8xf32>
  return %b : tensor<8xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NOT:   hpsrt
// CHECK:       return
