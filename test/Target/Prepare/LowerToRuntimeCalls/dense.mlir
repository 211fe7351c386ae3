// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Dense ops become one kernel op each: hpsrt.gemm (m, n, k from the
// operand shapes and transposes, alpha and beta, C's shape when there is
// one), hpsrt.matmul, hpsrt.conv (the pads split into begins and ends, the
// held layouts of x and y, exact), hpsrt.integer_conv for an 8-bit conv,
// the conv adjoints hpsrt.conv_grad_input and hpsrt.conv_grad_filter, and
// hpsrt.determinant. constantB / constantWeights are set for constants and
// frozen weights only (trained weights change every step). An
// hpsrt.fused_dense region becomes its dense op's kernel, with the
// activation (and a conv's residual) it fuses as the kernel's epilogue.

// CHECK-LABEL: func.func @gemm_and_matmul
func.func @gemm_and_matmul(%x: tensor<4x8xf32>, %wt: tensor<3x8xf32>, %c: tensor<3xf32>, %xt: tensor<8x4xf32>, %a3: tensor<2x3x8xf32>) -> (tensor<4x3xf32>, tensor<4x5xf32>, tensor<2x3x5xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[W:.*]] = hps.weight "w"
  // CHECK-NEXT: %[[TW:.*]] = hps.weight "tw"
  %w = hps.weight "w" dense<0.5> : tensor<8x5xf32>
  %tw = hps.weight "tw" {hps.trainable} dense<0.5> : tensor<8x5xf32>
  // B transposed: n is B's first dim; a C of shape [3]; B is an argument.
  // CHECK-NEXT: %[[G:.*]] = "hpsrt.gemm"(%arg0, %arg1, %arg2) <{act = #hpsrt.activation<kind = <Identity>, {{.*}}>, alpha = 2.000000e+00 : f32, beta = 5.000000e-01 : f32, cShape = array<i64: 3>, constantB = false, k = 8 : i64, m = 4 : i64, n = 3 : i64, transA = false, transB = true, type = f32}> : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %g = hps.gemm %x, %wt, %c {trans_b, alpha = 2.0 : f32, beta = 0.5 : f32} : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // A transposed: m and k from A's [K, M]; no C, so no cShape; a frozen
  // weight B is constant.
  // CHECK-NEXT: %[[G2:.*]] = "hpsrt.gemm"(%arg3, %[[W]]) <{act = #hpsrt.activation<kind = <Identity>, {{.*}}>, alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, constantB = true, k = 8 : i64, m = 4 : i64, n = 5 : i64, transA = true, transB = false, type = f32}> : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %g2 = hps.gemm %xt, %w {trans_a} : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  // A trained weight is not constant.
  // CHECK-NEXT: %[[M:.*]] = "hpsrt.matmul"(%arg4, %[[TW]]) <{a = array<i64: 2, 3, 8>, act = #hpsrt.activation<kind = <Identity>, {{.*}}>, b = array<i64: 8, 5>, constantB = false, type = f32, y = array<i64: 2, 3, 5>}> : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
  %m = hps.matmul %a3, %tw : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT: return %[[G]], %[[G2]], %[[M]]
  return %g, %g2, %m : tensor<4x3xf32>, tensor<4x5xf32>, tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<1x4x8x8xf32>, %bias: tensor<6xf32>, %x1: tensor<2x4x9xf32>, %w1: tensor<8x2x3xf32>) -> (tensor<1x6x4x4xf32>, tensor<2x8x7xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[W:.*]] = hps.constant
  %w = hps.constant dense<0.25> : tensor<6x4x3x3xf32>
  // Pads [1, 0, 0, 1]: begins [1, 0], ends [0, 1]; a bias; y held Native;
  // a constant filter.
  // CHECK-NEXT: %[[C:.*]] = "hpsrt.conv"(%arg0, %[[W]], %arg1) <{act = #hpsrt.activation<kind = <Identity>, {{.*}}>, constantWeights = true, dilations = array<i64: 1, 1>, group = 1 : i64, hasBias = true, operandSegmentSizes = array<i32: 1, 1, 1, 0>, options = #hpsrt.conv_options<x = <Plain>, y = <Native>, residual = false, exact = true>, padBegin = array<i64: 1, 0>, padEnd = array<i64: 0, 1>, strides = array<i64: 2, 2>, type = f32, w = array<i64: 6, 4, 3, 3>, x = array<i64: 1, 4, 8, 8>, y = array<i64: 1, 6, 4, 4>}> {hpsrt.held_layouts = [#hpsrt.layout<Native>]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %c = hps.conv %x, %w, %bias {dilations = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>, exact, hpsrt.held_layouts = [#hpsrt.layout<Native>]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  // A grouped, dilated 1-D conv.
  // CHECK-NEXT: %[[C1:.*]] = "hpsrt.conv"(%arg2, %arg3) <{{.*}}constantWeights = false, dilations = array<i64: 2>, group = 2 : i64, hasBias = false, operandSegmentSizes = array<i32: 1, 1, 0, 0>, options = #hpsrt.conv_options<x = <Plain>, y = <Plain>, residual = false, exact = false>, padBegin = array<i64: 1>, padEnd = array<i64: 1>, strides = array<i64: 1>, type = f32, w = array<i64: 8, 2, 3>, x = array<i64: 2, 4, 9>, y = array<i64: 2, 8, 7>}>
  %c1 = hps.conv %x1, %w1 {dilations = array<i64: 2>, pads = array<i64: 1, 1>, strides = array<i64: 1>, group = 2 : i64} : (tensor<2x4x9xf32>, tensor<8x2x3xf32>) -> tensor<2x8x7xf32>
  // CHECK-NEXT: return %[[C]], %[[C1]]
  return %c, %c1 : tensor<1x6x4x4xf32>, tensor<2x8x7xf32>
}

// u8 activations, an i8 filter and an i32 bias: the exact integer kernel,
// with x's element type.
// CHECK-LABEL: func.func @integer_conv
func.func @integer_conv(%x: tensor<1x4x5x5xui8>, %b: tensor<8xi32>) -> tensor<1x8x3x3xi32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[W:.*]] = hps.constant
  %w = hps.constant dense<3> : tensor<8x4x3x3xi8>
  // CHECK-NEXT: %[[Y:.*]] = "hpsrt.integer_conv"(%arg0, %[[W]], %arg1) <{constantWeights = true, dilations = array<i64: 1, 1>, group = 1 : i64, hasBias = true, layouts = #hpsrt.conv_layouts<x = <Plain>, y = <Plain>>, padBegin = array<i64: 1, 1>, padEnd = array<i64: 1, 1>, strides = array<i64: 2, 2>, w = array<i64: 8, 4, 3, 3>, x = array<i64: 1, 4, 5, 5>, xType = ui8, y = array<i64: 1, 8, 3, 3>}> : (tensor<1x4x5x5xui8>, tensor<8x4x3x3xi8>, tensor<8xi32>) -> tensor<1x8x3x3xi32>
  %y = hps.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xui8>, tensor<8x4x3x3xi8>, tensor<8xi32>) -> tensor<1x8x3x3xi32>
  // CHECK-NOT: hps.conv
  // CHECK-NEXT: return %[[Y]]
  return %y : tensor<1x8x3x3xi32>
}

// The adjoints take the forward convolution's shapes (x, w, y = dy's) and
// the layouts of the x-shaped and y-shaped activations (dy here is held
// channels-last by the op that makes it).
// CHECK-LABEL: func.func @conv_grads
func.func @conv_grads(%g: tensor<2x6x4x4xf32>, %w: tensor<6x1x3x3xf32>, %x: tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<6x1x3x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[DY:.*]] = "hpsrt.unary"(%arg0) {{.*}} {hpsrt.held_layouts = [#hpsrt.layout<ChannelsLast>]}
  %dy = hps.neg %g {hpsrt.held_layouts = [#hpsrt.layout<ChannelsLast>]} : tensor<2x6x4x4xf32>
  // CHECK-NEXT: %[[DX:.*]] = "hpsrt.conv_grad_input"(%[[DY]], %arg1) <{dilations = array<i64: 1, 1>, group = 3 : i64, layouts = #hpsrt.conv_layouts<x = <Plain>, y = <ChannelsLast>>, padBegin = array<i64: 1, 0>, padEnd = array<i64: 0, 1>, strides = array<i64: 2, 2>, type = f32, w = array<i64: 6, 1, 3, 3>, x = array<i64: 2, 3, 8, 8>, y = array<i64: 2, 6, 4, 4>}> {hps.backward} : (tensor<2x6x4x4xf32>, tensor<6x1x3x3xf32>) -> tensor<2x3x8x8xf32>
  %dx = hps.conv_grad_input %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 1>, group = 3 : i64, hps.backward} : (tensor<2x6x4x4xf32>, tensor<6x1x3x3xf32>) -> tensor<2x3x8x8xf32>
  // CHECK-NEXT: %[[DW:.*]] = "hpsrt.conv_grad_filter"(%arg2, %[[DY]]) <{dilations = array<i64: 1, 1>, group = 3 : i64, layouts = #hpsrt.conv_layouts<x = <Plain>, y = <ChannelsLast>>, padBegin = array<i64: 1, 0>, padEnd = array<i64: 0, 1>, strides = array<i64: 2, 2>, type = f32, w = array<i64: 6, 1, 3, 3>, x = array<i64: 2, 3, 8, 8>, y = array<i64: 2, 6, 4, 4>}> {hps.backward} : (tensor<2x3x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x1x3x3xf32>
  %dw = hps.conv_grad_filter %x, %dy {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 1>, group = 3 : i64, hps.backward} : (tensor<2x3x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x1x3x3xf32>
  // CHECK-NEXT: return %[[DX]], %[[DW]]
  return %dx, %dw : tensor<2x3x8x8xf32>, tensor<6x1x3x3xf32>
}

// A gemm and its fused activation: one gemm kernel applying the leaky relu
// (its alpha kept); the region and its body are gone.
// CHECK-LABEL: func.func @fused_gemm
func.func @fused_gemm(%x: tensor<4x8xf32>, %w: tensor<3x8xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[F:.*]] = "hpsrt.gemm"(%arg0, %arg1, %arg2) <{act = #hpsrt.activation<kind = <LeakyRelu>, params = <alpha = 2.000000e-01 : f32, {{.*}}>>, {{.*}}cShape = array<i64: 3>, constantB = false, k = 8 : i64, m = 4 : i64, n = 3 : i64, transA = false, transB = true, type = f32}> : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %f = hpsrt.fused_dense -> tensor<4x3xf32> {
    %h = hps.gemm %x, %w, %b {trans_b} : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %s = hps.leaky_relu %h {alpha = 0.2 : f32} : tensor<4x3xf32>
    hpsrt.yield %s : tensor<4x3xf32>
  }
  // CHECK-NOT: hps.gemm
  // CHECK-NOT: hps.leaky_relu
  // CHECK-NOT: hpsrt.yield
  // CHECK-NEXT: return %[[F]]
  return %f : tensor<4x3xf32>
}

// A ResNet block's tail: conv + shortcut add + relu is one conv kernel
// reading the residual (the add's other operand, here its lhs) and applying
// the relu; x is held as the first conv holds its result, y as the region
// is held.
// CHECK-LABEL: func.func @fused_conv_residual
func.func @fused_conv_residual(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[A:.*]] = "hpsrt.conv"(%arg0, %arg1) <{{.*}}residual = false{{.*}}> {hpsrt.held_layouts = [#hpsrt.layout<Native>]}
  %a = hps.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, hpsrt.held_layouts = [#hpsrt.layout<Native>]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  // CHECK-NEXT: %[[R:.*]] = "hpsrt.conv"(%[[A]], %arg1, %arg0) <{act = #hpsrt.activation<kind = <Relu>, {{.*}}>, {{.*}}hasBias = false, operandSegmentSizes = array<i32: 1, 1, 0, 1>, options = #hpsrt.conv_options<x = <Native>, y = <Native>, residual = true, exact = false>, {{.*}}}> {hpsrt.held_layouts = [#hpsrt.layout<Native>]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %r = hpsrt.fused_dense -> tensor<1x16x8x8xf32> {
    %c = hps.conv %a, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
    %s = hps.add %x, %c : tensor<1x16x8x8xf32>
    %y = hps.relu %s : tensor<1x16x8x8xf32>
    hpsrt.yield %y : tensor<1x16x8x8xf32>
  } {hpsrt.held_layouts = [#hpsrt.layout<Native>]}
  // CHECK-NEXT: return %[[R]]
  return %r : tensor<1x16x8x8xf32>
}

// Determinants of a batch of 2 x 3 square 4 x 4 matrices.
// CHECK-LABEL: func.func @determinant
func.func @determinant(%x: tensor<2x3x4x4xf32>) -> tensor<2x3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[D:.*]] = "hpsrt.determinant"(%arg0) <{batch = 6 : i64, n = 4 : i64, type = f32}> : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  %d = hps.determinant %x : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[D]]
  return %d : tensor<2x3xf32>
}
