// RUN: rm -rf %t && not heterps-translate --hps-to-stages %s -split-input-file -o %t 2>&1 | FileCheck %s
// RUN: not ls %t

// CHECK: error: --hps-to-stages needs a partitioned module (run --hps-place and --hps-partition first)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// CHECK: error: cannot lower to the runtime: result type 'tensor<?x4xf32>' is not static; bind symbolic input dims with --batch, --dim or --input-shape
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<?x4xf32>
  %r = hps.recv "c1" : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64} {
  %x = hps.recv "c0" : tensor<?x4xf32>
  %y = hps.relu %x {device = #hps.device<"cpu.xeon">} : tensor<?x4xf32>
  hps.send %y to "c1" : tensor<?x4xf32>
  return
}

// -----

// CHECK: error: cannot lower to the runtime: ONNX 'Foo' stayed generic after legalization and has no kernel
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<4xf32>
  %r = hps.recv "c1" : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64} {
  %x = hps.recv "c0" : tensor<4xf32>
  %y = hps.onnx_node "Foo"(%x) {domain = "", opset = 13 : i64, attrs = {}, device = #hps.device<"cpu.xeon">} : (tensor<4xf32>) -> tensor<4xf32>
  hps.send %y to "c1" : tensor<4xf32>
  return
}

// -----

// A hand-written fusion the kernels cannot run: a gemm applies activations
// only, and a transpose is none.
// CHECK: error: cannot lower to the runtime: no activation the dense kernels apply
func.func @main(%x: tensor<4x8xf32>) -> tensor<3x4xf32> attributes {hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<4x8xf32>
  %r = hps.recv "c1" : tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64} {
  %x = hps.recv "c0" : tensor<4x8xf32>
  %w = hps.weight "w" dense<0.5> : tensor<8x3xf32>
  %y = hpsrt.fused_dense -> tensor<3x4xf32> {
    %g = hps.gemm %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %t = hps.transpose %g {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
    hpsrt.yield %t : tensor<3x4xf32>
  }
  hps.send %y to "c1" : tensor<3x4xf32>
  return
}
