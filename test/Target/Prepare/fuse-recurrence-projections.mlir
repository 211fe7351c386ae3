// RUN: heterps-opt --hps-fuse-recurrence-projections %s -split-input-file | FileCheck %s

// On a CPU the recurrence takes X, W and Wb and projects itself: the gemm
// and the view of its result move into one projected_recurrence at the
// recurrence's place, which yields the recurrence's results.
func.func @stage_0(%x: tensor<6x8xf32>, %w: tensor<20x8xf32>, %wb: tensor<20xf32>, %r: tensor<20x5xf32>, %rb: tensor<20xf32>, %h0: tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  %p = hps.gemm %x, %w, %wb {trans_b} : (tensor<6x8xf32>, tensor<20x8xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  %other = hps.neg %h0 : tensor<3x5xf32>
  %p3 = hps.reshape %p {shape = array<i64: 2, 3, 20>} : (tensor<6x20xf32>) -> tensor<2x3x20xf32>
  %y, %h, %c = hps.recurrence %p3, %r, %rb, %other initial_c %h0 {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<2x3x20xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %h : tensor<2x3x5xf32>, tensor<3x5xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[OTHER:.*]] = hps.neg %arg5
// CHECK-NEXT:    %[[R:.*]]:3 = hpsrt.projected_recurrence -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32> {
// CHECK-NEXT:      %[[P:.*]] = hps.gemm %arg0, %arg1, %arg2
// CHECK-NEXT:      %[[P3:.*]] = hps.reshape %[[P]]
// CHECK-NEXT:      %[[Y:.*]], %[[H:.*]], %[[C:.*]] = hps.recurrence %[[P3]], %arg3, %arg4, %[[OTHER]]
// CHECK-NEXT:      hpsrt.yield %[[Y]], %[[H]], %[[C]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1

// -----

// A GPU keeps the one large gemm; on a CPU a projection read by anything
// else (here returned) stays too.
func.func @stage_0(%x: tensor<6x8xf32>, %w: tensor<20x8xf32>, %r: tensor<20x5xf32>, %rb: tensor<20xf32>, %h0: tensor<3x5xf32>) -> tensor<2x3x5xf32> attributes {hps.device = #hps.device<"gpu.v100">} {
  %p = hps.gemm %x, %w {trans_b} : (tensor<6x8xf32>, tensor<20x8xf32>) -> tensor<6x20xf32>
  %p3 = hps.reshape %p {shape = array<i64: 2, 3, 20>} : (tensor<6x20xf32>) -> tensor<2x3x20xf32>
  %y, %h, %c = hps.recurrence %p3, %r, %rb, %h0 initial_c %h0 {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<2x3x20xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<2x3x5xf32>
}
func.func @stage_1(%x: tensor<6x8xf32>, %w: tensor<20x8xf32>, %r: tensor<20x5xf32>, %rb: tensor<20xf32>, %h0: tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<6x20xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  %p = hps.gemm %x, %w {trans_b} : (tensor<6x8xf32>, tensor<20x8xf32>) -> tensor<6x20xf32>
  %p3 = hps.reshape %p {shape = array<i64: 2, 3, 20>} : (tensor<6x20xf32>) -> tensor<2x3x20xf32>
  %y, %h, %c = hps.recurrence %p3, %r, %rb, %h0 initial_c %h0 {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<2x3x20xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y, %p : tensor<2x3x5xf32>, tensor<6x20xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NOT:   hpsrt
// CHECK-LABEL: func.func @stage_1
// CHECK-NOT:   hpsrt
// CHECK:       return
