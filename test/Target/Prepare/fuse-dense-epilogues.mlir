// RUN: heterps-opt --hps-fuse-dense-epilogues %s -split-input-file | FileCheck %s

// A ResNet block's tail: the shortcut add and the relu go into the conv that
// produces the add's other operand; the kernel stores the relu's result.
func.func @stage_0(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  %c = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %s = hps.add %c, %x : tensor<1x16x8x8xf32>
  %y = hps.relu %s : tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[Y:.*]] = hpsrt.fused_dense -> tensor<1x16x8x8xf32> {
// CHECK-NEXT:      %[[C:.*]] = hps.conv %arg0, %arg1
// CHECK-NEXT:      %[[S:.*]] = hps.add %[[C]], %arg0
// CHECK-NEXT:      %[[R:.*]] = hps.relu %[[S]]
// CHECK-NEXT:      hpsrt.yield %[[R]] : tensor<1x16x8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]

// -----

// An activation another op also reads the gemm's result for stays apart;
// a second gemm's sigmoid fuses. Functions without hps.device (@main) are
// no stages and are left alone.
func.func @stage_0(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) attributes {hps.device = #hps.device<"gpu.v100">} {
  %h = hps.gemm %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %t = hps.tanh %h : tensor<4x3xf32>
  %g = hps.gemm %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %s = hps.sigmoid %g : tensor<4x3xf32>
  return %h, %t, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %h = hps.gemm %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %t = hps.tanh %h : tensor<4x3xf32>
  return %t : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[H:.*]] = hps.gemm
// CHECK-NEXT:    %[[T:.*]] = hps.tanh %[[H]]
// CHECK-NEXT:    %[[S:.*]] = hpsrt.fused_dense -> tensor<4x3xf32> {
// CHECK-NEXT:      %[[G:.*]] = hps.gemm
// CHECK-NEXT:      %[[SIG:.*]] = hps.sigmoid %[[G]]
// CHECK-NEXT:      hpsrt.yield %[[SIG]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[H]], %[[T]], %[[S]]
// CHECK-LABEL: func.func @main
// CHECK-NOT:   hpsrt
// CHECK:       return

// -----

// Never across directions: a backward relu of a forward matmul's result
// stays apart (an evaluating run skips backward ops); nor a
// residual computed after the conv, nor an activation of a view.
func.func @stage_0(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> (tensor<4x3xf32>, tensor<1x16x8x8xf32>, tensor<12xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  %m = hps.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = hps.relu %m {hps.backward} : tensor<4x3xf32>
  %c = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %later = hps.neg %x : tensor<1x16x8x8xf32>
  %s = hps.add %c, %later : tensor<1x16x8x8xf32>
  %g = hps.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %v = hps.reshape %g {shape = array<i64: 12>} : (tensor<4x3xf32>) -> tensor<12xf32>
  %e = hps.exp %v : tensor<12xf32>
  return %r, %s, %e : tensor<4x3xf32>, tensor<1x16x8x8xf32>, tensor<12xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NOT:   hpsrt
// CHECK:       return
