// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Elementwise ops become hpsrt.unary, hpsrt.binary, hpsrt.where and
// hpsrt.cast: the unary kind carries its parameters (defaults filled in,
// open clip bounds as infinities), the binary kind its operand type and the
// three shapes it broadcasts. A Pow of mixed element types computes in a
// common type between casts: a float base takes its exponent converted to
// its type, an integer base is raised in f64 and truncated back. A
// same-type cast is a view and stays, as does an hpsrt.fused_loop;
// functions without hps.device are no stages and are left alone.

// CHECK-LABEL: func.func @unary
func.func @unary(%a: tensor<2x3xf32>, %b: tensor<4xi1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi1>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[R:.*]] = "hpsrt.unary"(%arg0) <{kind = #hpsrt.unary_kind<Relu>, n = 6 : i64, params = #hpsrt.unary_params<alpha = 0.000000e+00 : f32, beta = 0.000000e+00 : f32, lo = 0xFFF0000000000000 : f64, hi = 0x7FF0000000000000 : f64>, type = f32}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = hps.relu %a : tensor<2x3xf32>
  // The default alpha of 0.01.
  // CHECK-NEXT: %[[L:.*]] = "hpsrt.unary"(%arg0) <{kind = #hpsrt.unary_kind<LeakyRelu>, n = 6 : i64, params = #hpsrt.unary_params<alpha = 0.00999999977 : f32
  %l = hps.leaky_relu %a : tensor<2x3xf32>
  // CHECK-NEXT: %[[H:.*]] = "hpsrt.unary"(%arg0) <{kind = #hpsrt.unary_kind<HardSigmoid>, n = 6 : i64, params = #hpsrt.unary_params<alpha = 2.000000e-01 : f32, beta = 2.500000e-01 : f32
  %h = hps.hard_sigmoid %a {beta = 2.500000e-01 : f32} : tensor<2x3xf32>
  // A clip with a lower bound alone: the upper one stays open.
  // CHECK-NEXT: %[[C:.*]] = "hpsrt.unary"(%arg0) <{kind = #hpsrt.unary_kind<Clip>, n = 6 : i64, params = #hpsrt.unary_params<alpha = 0.000000e+00 : f32, beta = 0.000000e+00 : f32, lo = -1.500000e+00 : f64, hi = 0x7FF0000000000000 : f64>, type = f32}>
  %c = hps.clip %a {min = -1.500000e+00 : f64} : tensor<2x3xf32>
  // CHECK-NEXT: %[[G:.*]] = "hpsrt.unary"(%arg0) <{kind = #hpsrt.unary_kind<GeluTanh>
  %g = hps.gelu %a {tanh_approximation} : tensor<2x3xf32>
  // CHECK-NEXT: %[[N:.*]] = "hpsrt.unary"(%arg1) <{kind = #hpsrt.unary_kind<Not>, n = 4 : i64, {{.*}}, type = i1}> : (tensor<4xi1>) -> tensor<4xi1>
  %n = hps.not %b : tensor<4xi1>
  // CHECK-NEXT: return %[[R]], %[[L]], %[[H]], %[[C]], %[[G]], %[[N]]
  return %r, %l, %h, %c, %g, %n : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi1>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<4xi1>, tensor<2x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[S:.*]] = "hpsrt.binary"(%arg0, %arg1) <{a = array<i64: 2, 3>, b = array<i64: 3>, in = f32, kind = #hpsrt.binary_kind<Add>, y = array<i64: 2, 3>}> : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %s = hps.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // A comparison: f32 in, i1 out.
  // CHECK-NEXT: %[[E:.*]] = "hpsrt.binary"(%arg0, %arg1) <{a = array<i64: 2, 3>, b = array<i64: 3>, in = f32, kind = #hpsrt.binary_kind<Less>, y = array<i64: 2, 3>}> : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %e = hps.less %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
  // CHECK-NEXT: %[[M:.*]] = "hpsrt.binary"(%arg0, %arg1) <{{.*}}kind = #hpsrt.binary_kind<FMod>
  %m = hps.mod %a, %b {fmod} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %[[AND:.*]] = "hpsrt.binary"(%arg2, %arg3) <{a = array<i64: 4>, b = array<i64: 4>, in = i1, kind = #hpsrt.binary_kind<And>, y = array<i64: 4>}>
  %and = hps.and %p, %q : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  // A Pow of one element type is a plain binary.
  // CHECK-NEXT: %[[POW:.*]] = "hpsrt.binary"(%arg0, %arg1) <{{.*}}in = f32, kind = #hpsrt.binary_kind<Pow>
  %pow = hps.pow %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[S]], %[[E]], %[[M]], %[[AND]], %[[POW]]
  return %s, %e, %m, %and, %pow : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<4xi1>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @where_and_cast
func.func @where_and_cast(%c: tensor<2x1xi1>, %a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // The shapes of cond, x, y and the broadcast result.
  // CHECK-NEXT: %[[W:.*]] = "hpsrt.where"(%arg0, %arg1, %arg2) <{cond = array<i64: 2, 1>, out = array<i64: 2, 3>, type = f32, x = array<i64: 2, 3>, y = array<i64: 3>}> : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %w = hps.where %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[CA:.*]] = "hpsrt.cast"(%arg1) <{from = f32, n = 6 : i64, to = i32}> : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %ca = hps.cast %a : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // A cast to its own type is a view: no kernel.
  // CHECK-NEXT: %[[SAME:.*]] = hps.cast %arg1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %same = hps.cast %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[W]], %[[CA]], %[[SAME]]
  return %w, %ca, %same : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mixed_pow
func.func @mixed_pow(%f: tensor<2x3xf32>, %e: tensor<i64>, %i: tensor<2x3xi32>, %x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // A float base: the i64 exponent is cast to f32, the Pow runs in f32 and
  // is the result.
  // CHECK-NEXT: %[[E32:.*]] = "hpsrt.cast"(%arg1) <{from = i64, n = 1 : i64, to = f32}> : (tensor<i64>) -> tensor<f32>
  // CHECK-NEXT: %[[FP:.*]] = "hpsrt.binary"(%arg0, %[[E32]]) <{a = array<i64: 2, 3>, b = array<i64>, in = f32, kind = #hpsrt.binary_kind<Pow>, y = array<i64: 2, 3>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %fp = hps.pow %f, %e : tensor<2x3xf32>, tensor<i64> -> tensor<2x3xf32>
  // An integer base: both operands go to f64, and the f64 power is
  // truncated back to i32.
  // CHECK-NEXT: %[[B64:.*]] = "hpsrt.cast"(%arg2) <{from = i32, n = 6 : i64, to = f64}> : (tensor<2x3xi32>) -> tensor<2x3xf64>
  // CHECK-NEXT: %[[X64:.*]] = "hpsrt.cast"(%arg3) <{from = f32, n = 3 : i64, to = f64}> : (tensor<3xf32>) -> tensor<3xf64>
  // CHECK-NEXT: %[[P64:.*]] = "hpsrt.binary"(%[[B64]], %[[X64]]) <{a = array<i64: 2, 3>, b = array<i64: 3>, in = f64, kind = #hpsrt.binary_kind<Pow>, y = array<i64: 2, 3>}> : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  // CHECK-NEXT: %[[IP:.*]] = "hpsrt.cast"(%[[P64]]) <{from = f64, n = 6 : i64, to = i32}> : (tensor<2x3xf64>) -> tensor<2x3xi32>
  %ip = hps.pow %i, %x : tensor<2x3xi32>, tensor<3xf32> -> tensor<2x3xi32>
  // CHECK-NEXT: return %[[FP]], %[[IP]]
  return %fp, %ip : tensor<2x3xf32>, tensor<2x3xi32>
}

// The kernel op keeps the replaced op's discardable attributes; the
// placement (an inherent attribute) is not a kernel parameter.
// CHECK-LABEL: func.func @keeps_attributes
func.func @keeps_attributes(%a: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[N:.*]] = "hpsrt.unary"(%arg0) <{kind = #hpsrt.unary_kind<Neg>, {{.*}}}> {hps.backward} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = hps.neg %a {device = #hps.device<"cpu.xeon">, hps.backward} : tensor<2x3xf32>
  // CHECK-NEXT: return %[[N]]
  return %n : tensor<2x3xf32>
}

// An hpsrt.fused_loop is printed as a generated loop, not a kernel: it and
// its body stay as they are; the neg after it is lowered.
// CHECK-LABEL: func.func @fused_loop
func.func @fused_loop(%c: tensor<8xf32>, %h: tensor<f32>) -> tensor<8xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[L:.*]] = hpsrt.fused_loop -> tensor<8xf32> {
  // CHECK-NEXT:   %[[M:.*]] = hps.mul %arg0, %arg1
  // CHECK-NEXT:   %[[R:.*]] = hps.round %[[M]]
  // CHECK-NEXT:   hpsrt.yield %[[R]] : tensor<8xf32>
  // CHECK-NEXT: }
  %l = hpsrt.fused_loop -> tensor<8xf32> {
    %m = hps.mul %c, %h : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
    %r = hps.round %m : tensor<8xf32>
    hpsrt.yield %r : tensor<8xf32>
  }
  // CHECK-NEXT: %[[N:.*]] = "hpsrt.unary"(%[[L]]) <{kind = #hpsrt.unary_kind<Neg>
  %n = hps.neg %l : tensor<8xf32>
  // CHECK-NEXT: return %[[N]]
  return %n : tensor<8xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT: hps.relu
// CHECK-NOT: hpsrt
// CHECK: return
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = hps.relu %a : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
