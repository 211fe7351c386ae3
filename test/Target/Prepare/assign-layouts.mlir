// RUN: heterps-opt --hps-assign-layouts %s -split-input-file | FileCheck %s

// A conv chain keeps the blocked layout between the convs: the first conv's
// result is held (hpsrt.held_layouts) because the second conv reads it so.
// Its other readers want it plain: the pooling and the reshape (a view of
// another shape orders the elements differently) read one copy made by a
// relayout right after the producer, the reshape moved onto the copy. The
// last conv's result is read plain only, so it stays plain.
func.func @stage_0(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>, tensor<16x64xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  %a = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %b = hps.conv %a, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %p = hps.global_avg_pool %a : (tensor<1x16x8x8xf32>) -> tensor<1x16x1x1xf32>
  %v = hps.reshape %a {shape = array<i64: 16, 64>} : (tensor<1x16x8x8xf32>) -> tensor<16x64xf32>
  %n = hps.neg %v : tensor<16x64xf32>
  return %b, %p, %n : tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>, tensor<16x64xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[A:.*]] = hps.conv %arg0, %arg1 {{.*}}hpsrt.held_layouts = [#hpsrt.layout<Native>]
// CHECK-NEXT:    %[[PLAIN:.*]] = "hpsrt.relayout"(%[[A]]) <{from = #hpsrt.layout<Native>, shape = array<i64: 1, 16, 8, 8>, to = #hpsrt.layout<Plain>, type = f32}>
// CHECK-NEXT:    %[[B:.*]] = hps.conv %[[A]], %arg1
// CHECK-NOT:     held_layouts
// CHECK-NEXT:    %[[P:.*]] = hps.global_avg_pool %[[PLAIN]]
// CHECK-NEXT:    %[[V:.*]] = hps.reshape %[[PLAIN]]
// CHECK-NEXT:    %[[N:.*]] = hps.neg %[[V]]

// -----

// Channels not a multiple of the native block stay plain; GPU stages keep
// every tensor plain.
func.func @stage_0(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  %a = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  %b = hps.conv %a, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  return %b : tensor<1x8x8x8xf32>
}
func.func @stage_1(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32> attributes {hps.device = #hps.device<"gpu.v100">} {
  %a = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %b = hps.conv %a, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  return %b : tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NOT:   hpsrt
// CHECK-LABEL: func.func @stage_1
// CHECK-NOT:   hpsrt
// CHECK:       return

// -----

// After fusion: a fused conv + residual + relu is held like a conv when its
// residual is held the same way (test/Target/Stages/channels-last.mlir has
// the int8 chains held channels-last, through elementwise loops).
func.func @stage_0(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x1x1xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  %a = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = hpsrt.fused_dense -> tensor<1x16x8x8xf32> {
    %c = hps.conv %a, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
    %s = hps.add %c, %a : tensor<1x16x8x8xf32>
    %y = hps.relu %s : tensor<1x16x8x8xf32>
    hpsrt.yield %y : tensor<1x16x8x8xf32>
  }
  %d = hps.conv %r, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %p = hps.global_avg_pool %d : (tensor<1x16x8x8xf32>) -> tensor<1x16x1x1xf32>
  return %p : tensor<1x16x1x1xf32>
}

// CHECK-LABEL: func.func @stage_0
// CHECK-NEXT:    %[[A:.*]] = hps.conv {{.*}}hpsrt.held_layouts = [#hpsrt.layout<Native>]
// CHECK-NEXT:    %[[R:.*]] = hpsrt.fused_dense -> tensor<1x16x8x8xf32> {
// CHECK:         } {hpsrt.held_layouts = [#hpsrt.layout<Native>]}
// CHECK-NEXT:    %[[D:.*]] = hps.conv %[[R]]
// CHECK-NOT:     held_layouts
// CHECK-NEXT:    hps.global_avg_pool %[[D]]
