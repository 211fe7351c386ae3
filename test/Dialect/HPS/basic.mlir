// RUN: heterps-opt %s | heterps-opt | FileCheck %s
// RUN: heterps-opt %s --mlir-print-op-generic | heterps-opt | FileCheck %s

// CHECK-LABEL: func @values
func.func @values() -> (tensor<2xi64>, tensor<4x2xf32>) {
  // CHECK: hps.constant dense<[1, 2]> : tensor<2xi64>
  %c = hps.constant dense<[1, 2]> : tensor<2xi64>
  // CHECK: hps.weight "fc.w" dense<1.000000e+00> : tensor<4x2xf32>
  %w = hps.weight "fc.w" dense<1.0> : tensor<4x2xf32>
  return %c, %w : tensor<2xi64>, tensor<4x2xf32>
}

// CHECK-LABEL: func @placement
func.func @placement(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  // CHECK: hps.matmul %{{.*}}, %{{.*}} {device = #hps.device<"gpu.v100">}
  %0 = hps.matmul %x, %w {device = #hps.device<"gpu.v100">} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  // CHECK: hps.relu %{{.*}} {device = #hps.device<"cpu.xeon">} : tensor<8x4xf32>
  %1 = hps.relu %0 {device = #hps.device<"cpu.xeon">} : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// CHECK-LABEL: func @conv_adjoints
func.func @conv_adjoints(%x: tensor<2x3x8x8xf32>, %w: tensor<6x1x3x3xf32>, %g: tensor<2x6x4x4xf32>) -> (tensor<2x3x8x8xf32>, tensor<6x1x3x3xf32>) {
  // CHECK: hps.conv_grad_input {{.*}}group = 3 {{.*}} -> tensor<2x3x8x8xf32>
  %dx = hps.conv_grad_input %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x6x4x4xf32>, tensor<6x1x3x3xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: hps.conv_grad_filter {{.*}}group = 3 {{.*}} -> tensor<6x1x3x3xf32>
  %dw = hps.conv_grad_filter %x, %g {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x3x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x1x3x3xf32>
  return %dx, %dw : tensor<2x3x8x8xf32>, tensor<6x1x3x3xf32>
}

// The quantized conv: u8 by i8 into i32.
// CHECK-LABEL: func @int8_conv
func.func @int8_conv(%x: tensor<2x3x8x8xui8>, %w: tensor<6x3x3x3xi8>, %b: tensor<6xi32>) -> tensor<2x6x8x8xi32> {
  // CHECK: hps.conv {{.*}} : (tensor<2x3x8x8xui8>, tensor<6x3x3x3xi8>, tensor<6xi32>) -> tensor<2x6x8x8xi32>
  %0 = hps.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xui8>, tensor<6x3x3x3xi8>, tensor<6xi32>) -> tensor<2x6x8x8xi32>
  return %0 : tensor<2x6x8x8xi32>
}

// CHECK-LABEL: func @layers
func.func @layers(%x: tensor<2x3x8x8xf32>, %w: tensor<6x1x3x3xf32>, %b: tensor<6xf32>,
                  %s: tensor<6xf32>) -> tensor<2x6xf32> {
  // CHECK: hps.conv {{.*}}group = 3
  %0 = hps.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x3x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: hps.batch_norm
  %1 = hps.batch_norm %0, %s, %s, %s, %s {epsilon = 1.0e-3 : f32} : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: hps.max_pool {{.*}}ceil_mode
  %2 = hps.max_pool %1 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode} : (tensor<2x6x4x4xf32>) -> tensor<2x6x2x2xf32>
  // CHECK: hps.avg_pool {{.*}}count_include_pad
  %3 = hps.avg_pool %2 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, count_include_pad} : (tensor<2x6x2x2xf32>) -> tensor<2x6x2x2xf32>
  // CHECK: hps.global_avg_pool
  %4 = hps.global_avg_pool %3 : (tensor<2x6x2x2xf32>) -> tensor<2x6x1x1xf32>
  // CHECK: hps.flatten
  %5 = hps.flatten %4 {axis = 1 : i64} : (tensor<2x6x1x1xf32>) -> tensor<2x6xf32>
  // CHECK: hps.softmax {{.*}}axis = 1
  %6 = hps.softmax %5 {axis = 1 : i64} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %6 : tensor<2x6xf32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<4x1xf32>, %b: tensor<3xf32>, %c: tensor<4x3xi1>) -> tensor<4x3xf32> {
  // CHECK: hps.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %0 = hps.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: hps.less
  %1 = hps.less %0, %0 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  // CHECK: hps.where
  %2 = hps.where %1, %0, %a : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  // CHECK: hps.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %3 = hps.clip %2 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x3xf32>
  // CHECK: hps.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32}
  %4 = hps.leaky_relu %3 {alpha = 0.1 : f32} : tensor<4x3xf32>
  // CHECK: hps.reduce sum %{{.*}} {axes = array<i64: 1>, keepdims}
  %5 = hps.reduce sum %4 {axes = array<i64: 1>, keepdims} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  // CHECK: hps.mul
  %6 = hps.mul %4, %5 : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  return %6 : tensor<4x3xf32>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<2x6xf32>, %i: tensor<5xi64>, %t: tensor<100x8xf32>,
                         %ids: tensor<4x3xi64>) -> (tensor<4x8xf32>, tensor<4x3x8xf32>) {
  // CHECK: hps.split {{.*}}sizes = array<i64: 2, 4>
  %0:2 = hps.split %x {axis = 1 : i64, sizes = array<i64: 2, 4>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>)
  // CHECK: hps.concat
  %1 = hps.concat %0#1, %0#0 {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  // CHECK: hps.reshape {{.*}}shape = array<i64: 3, -1>
  %2 = hps.reshape %1 {shape = array<i64: 3, -1>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  // CHECK: hps.transpose {{.*}}perm = array<i64: 1, 0>
  %3 = hps.transpose %2 {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  // CHECK: hps.slice
  %4 = hps.slice %3 {starts = array<i64: -1>, ends = array<i64: -9223372036854775807>, axes = array<i64: 0>, steps = array<i64: -1>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: hps.unsqueeze
  %5 = hps.unsqueeze %4 {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<1x4x3xf32>
  // CHECK: hps.squeeze
  %6 = hps.squeeze %5 {axes = array<i64: 0>} : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
  // CHECK: hps.pad {{.*}}mode = #hps<pad_mode reflect>
  %7 = hps.pad %6 {pads = array<i64: 1, 0, 1, 0>, mode = #hps<pad_mode reflect>, value = 0.0 : f32} : (tensor<4x3xf32>) -> tensor<6x3xf32>
  // CHECK: hps.gather %{{.*}}, %{{.*}} : (tensor<6x3xf32>
  %8 = hps.gather %7, %i {axis = 0 : i64} : (tensor<6x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
  // CHECK: hps.scatter %{{.*}}, %{{.*}}, %{{.*}} {reduction = #hps<scatter_reduction max>} : (tensor<6x3xf32>, tensor<5xi64>, tensor<5x3xf32>) -> tensor<6x3xf32>
  %s = hps.scatter %7, %i, %8 {reduction = #hps<scatter_reduction max>} : (tensor<6x3xf32>, tensor<5xi64>, tensor<5x3xf32>) -> tensor<6x3xf32>
  // CHECK: hps.expand
  %9 = hps.expand %8 {shape = array<i64: 2, 1, 1>} : (tensor<5x3xf32>) -> tensor<2x5x3xf32>
  // CHECK: hps.cast
  %10 = hps.cast %9 : (tensor<2x5x3xf32>) -> tensor<2x5x3xf16>
  // CHECK: hps.embedding_lookup {{.*}}pooling = #hps<embedding_pooling mean>
  %11 = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling mean>} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  // CHECK: hps.embedding_lookup
  %12 = hps.embedding_lookup %t, %ids : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x3x8xf32>
  return %11, %12 : tensor<4x8xf32>, tensor<4x3x8xf32>
}

// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK: %[[NONE:.*]] = hps.none
  %n = hps.none
  // CHECK: hps.onnx_node "Custom"(%{{.*}}, %[[NONE]]) {attrs = {alpha = 5.000000e-01 : f32, mode = "fast", sizes = array<i64: 1, 2>}, device = #hps.device<"cpu.xeon">, domain = "com.example", opset = 2 : i64}
  %0 = hps.onnx_node "Custom"(%x, %n) {attrs = {alpha = 0.5 : f32, mode = "fast", sizes = array<i64: 1, 2>}, domain = "com.example", opset = 2 : i64, device = #hps.device<"cpu.xeon">} : (tensor<?x4xf32>, none) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// CHECK-LABEL: func @dynamic
func.func @dynamic(%x: tensor<?x3x?xf32>, %w: tensor<3x5xf32>) -> tensor<2xi64> {
  // CHECK: hps.matmul
  %0 = hps.matmul %x, %w : (tensor<?x3x?xf32>, tensor<3x5xf32>) -> tensor<?x3x5xf32>
  // CHECK: hps.shape {{.*}}start = 1
  %1 = hps.shape %0 {start = 1 : i64} : (tensor<?x3x5xf32>) -> tensor<2xi64>
  return %1 : tensor<2xi64>
}

// CHECK-LABEL: func @recurrence
func.func @recurrence(%p: tensor<6x2x12xf32>, %r: tensor<12x3xf32>, %rb: tensor<12xf32>, %h: tensor<2x3xf32>, %lens: tensor<2xi64>, %q: tensor<6x2x9xf32>, %r3: tensor<9x3xf32>, %rb3: tensor<9xf32>, %peep: tensor<9xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<6x2x3xf32>) {
  // CHECK: hps.recurrence %{{.*}} lengths %{{.*}} initial_c %{{.*}} peepholes %{{.*}} {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", clip = 2.000000e+00 : f32, reverse}
  %y, %hl, %cl = hps.recurrence %p, %r, %rb, %h lengths %lens initial_c %h peepholes %peep {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", clip = 2.0 : f32, reverse} : (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2xi64>, tensor<2x3xf32>, tensor<9xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  // CHECK: hps.recurrence %{{.*}} {activations = ["Sigmoid", "Relu"], cell = "gru", linear_before_reset}
  %gy, %gh = hps.recurrence %q, %r3, %rb3, %h {activations = ["Sigmoid", "Relu"], cell = "gru", linear_before_reset} : (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>)
  return %y, %gh, %gy : tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<6x2x3xf32>
}

// CHECK-LABEL: func @recurrence_grad
func.func @recurrence_grad(%p: tensor<6x2x12xf32>, %r: tensor<12x3xf32>, %rb: tensor<12xf32>, %h: tensor<2x3xf32>, %lens: tensor<2xi64>, %peep: tensor<9xf32>, %y: tensor<6x2x3xf32>, %q: tensor<6x2x9xf32>, %r3: tensor<9x3xf32>, %rb3: tensor<9xf32>) -> (tensor<6x2x12xf32>, tensor<9xf32>, tensor<2x3xf32>) {
  // CHECK: hps.recurrence_grad %{{.*}} lengths %{{.*}} initial_c %{{.*}} peepholes %{{.*}} y %{{.*}} grad_y %{{.*}} grad_c_last %{{.*}} {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", reverse}
  %dp, %dr, %drb, %dh, %dc:2 = hps.recurrence_grad %p, %r, %rb, %h lengths %lens initial_c %h peepholes %peep y %y grad_y %y grad_c_last %h {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", reverse} : (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2xi64>, tensor<2x3xf32>, tensor<9xf32>, tensor<6x2x3xf32>, tensor<6x2x3xf32>, tensor<2x3xf32>) -> (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>)
  // CHECK: hps.recurrence_grad %{{.*}} y %{{.*}} grad_h_last %{{.*}} {activations = ["Sigmoid", "Tanh"], cell = "gru"}
  %gq, %gr, %grb, %gh = hps.recurrence_grad %q, %r3, %rb3, %h y %y grad_h_last %h {activations = ["Sigmoid", "Tanh"], cell = "gru"} : (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>, tensor<6x2x3xf32>, tensor<2x3xf32>) -> (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>)
  return %dp, %dc#1, %gh : tensor<6x2x12xf32>, tensor<9xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func @data_dependent
func.func @data_dependent(%x: tensor<3x4xf32>, %boxes: tensor<2x5x4xf32>, %scores: tensor<2x3x5xf32>, %max: tensor<1xi64>, %iou: tensor<f32>) -> (tensor<2x12xi64>, tensor<3x4xf32>, tensor<30x3xi64>) {
  // CHECK: hps.non_zero %{{.*}} : (tensor<3x4xf32>) -> (tensor<2x12xi64>, tensor<i64>)
  %i, %n = hps.non_zero %x : (tensor<3x4xf32>) -> (tensor<2x12xi64>, tensor<i64>)
  // CHECK: hps.unique %{{.*}} {axis = 1 : i64, sorted}
  %v, %f, %inv, %c, %m = hps.unique %x {axis = 1 : i64, sorted} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<i64>)
  // CHECK: hps.non_max_suppression %{{.*}}, %{{.*}} max_per_class %{{.*}} iou_threshold %{{.*}} {center_point_box}
  %s, %k = hps.non_max_suppression %boxes, %scores max_per_class %max iou_threshold %iou {center_point_box} : (tensor<2x5x4xf32>, tensor<2x3x5xf32>, tensor<1xi64>, tensor<f32>) -> (tensor<30x3xi64>, tensor<i64>)
  return %i, %v, %s : tensor<2x12xi64>, tensor<3x4xf32>, tensor<30x3xi64>
}

// CHECK-LABEL: func @determinant
func.func @determinant(%x: tensor<2x3x4x4xf32>, %y: tensor<5x5xf64>) -> (tensor<2x3xf32>, tensor<f64>) {
  // CHECK: hps.determinant %{{.*}} : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  %0 = hps.determinant %x : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  // CHECK: hps.determinant %{{.*}} : (tensor<5x5xf64>) -> tensor<f64>
  %1 = hps.determinant %y : (tensor<5x5xf64>) -> tensor<f64>
  return %0, %1 : tensor<2x3xf32>, tensor<f64>
}
