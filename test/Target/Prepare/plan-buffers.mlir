// RUN: heterps-opt --hps-plan-buffers %s -split-input-file | FileCheck %s

// First fit in op order, 64-byte aligned, freed after the last read: %x is
// last read by %a's op, so %b takes %x's place; %a by %b's op, so the
// fusion's result (stored like any other) takes %a's. The reshape is a view
// (no offset; its reader, the send, keeps %b alive); weights live in
// weights.bin (no offset).
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">} {
  %x = hps.recv "c0" : tensor<4x4xf32>
  %w = hps.weight "w" dense<0.5> : tensor<4x4xf32>
  %a = hps.neg %x : tensor<4x4xf32>
  %b = hps.gemm %a, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = hps.reshape %b {shape = array<i64: 16>} : (tensor<4x4xf32>) -> tensor<16xf32>
  %c = hpsrt.fused_dense -> tensor<4x4xf32> {
    %g = hps.gemm %b, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %r = hps.relu %g : tensor<4x4xf32>
    hpsrt.yield %r : tensor<4x4xf32>
  }
  hps.send %v to "c1" : tensor<16xf32>
  hps.send %c to "c2" : tensor<4x4xf32>
  return
}

// CHECK-LABEL: func.func @stage_0
// CHECK-SAME:    hpsrt.arena_bytes = 128
// CHECK:         hps.recv "c0" {hpsrt.arena_offsets = array<i64: 0>}
// CHECK-NEXT:    hps.weight "w"
// CHECK-NOT:     arena_offsets
// CHECK-SAME:    : tensor<4x4xf32>
// CHECK-NEXT:    hps.neg {{.*}}hpsrt.arena_offsets = array<i64: 64>
// CHECK-NEXT:    hps.gemm {{.*}}hpsrt.arena_offsets = array<i64: 0>
// CHECK-NEXT:    hps.reshape
// CHECK-NOT:     arena_offsets
// CHECK-SAME:    -> tensor<16xf32>
// CHECK-NEXT:    hpsrt.fused_dense -> tensor<4x4xf32> {
// CHECK:         } {hpsrt.arena_offsets = array<i64: 64>}
