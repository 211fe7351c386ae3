// RUN: heterps-opt --hps-lower-to-runtime-calls -allow-unregistered-dialect -verify-diagnostics -split-input-file %s

// What the runtime cannot run is one error naming the op, and the pass
// stops there: an ONNX op legalization left generic, a value that is not a
// static tensor of a runtime element type, a fused dense op whose epilogue
// no dense kernel applies, an inference pull from a table the server cannot
// serve, and an op of another dialect. Functions without hps.device are no
// stages and are not checked.

func.func @stage_0(%x: tensor<3xf32>) -> tensor<3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-error @+1 {{cannot lower to the runtime: ONNX 'Foo' stayed generic after legalization and has no kernel}}
  %0 = hps.onnx_node "Foo"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  // The pass has stopped: no second error.
  %1 = hps.onnx_node "Bar"(%0) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// -----

func.func @stage_0(%x: tensor<?x3xf32>) -> tensor<?x3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-error @+1 {{cannot lower to the runtime: result type 'tensor<?x3xf32>' is not static; bind symbolic input dims with --batch, --dim or --input-shape}}
  %0 = hps.relu %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @stage_0(%x: tensor<3xf8E4M3FN>) -> tensor<3xf8E4M3FN> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-error @+1 {{cannot lower to the runtime: element type 'f8E4M3FN' has no runtime counterpart}}
  %0 = hps.relu %x : tensor<3xf8E4M3FN>
  return %0 : tensor<3xf8E4M3FN>
}

// -----

func.func @stage_0(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  %f = hpsrt.fused_dense -> tensor<4x3xf32> {
    %h = hps.gemm %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    // expected-error @+1 {{cannot lower to the runtime: no activation the dense kernels apply}}
    %s = hps.softmax %h : (tensor<4x3xf32>) -> tensor<4x3xf32>
    hpsrt.yield %s : tensor<4x3xf32>
  }
  return %f : tensor<4x3xf32>
}

// -----

func.func @stage_0(%ids: tensor<4xi64>) -> tensor<4x8xi32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-error @+1 {{cannot lower to the runtime: parameter-server table must hold f32 or f64}}
  %p = hps.ps_pull "t"[%ids] {table_type = tensor<10x8xi32>} : (tensor<4xi64>) -> tensor<4x8xi32>
  return %p : tensor<4x8xi32>
}

// -----

func.func @stage_0(%ids: tensor<4xi64>) -> tensor<4x8xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-error @+1 {{cannot lower to the runtime: parameter-server table must be a static 2-D tensor}}
  %p = hps.ps_pull "t"[%ids] {table_type = tensor<?x8xf32>} : (tensor<4xi64>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

func.func @stage_0(%x: tensor<3xf32>) -> tensor<3xf32> attributes {hps.device = #hps.device<"cpu.xeon">} {
  %r = hps.relu %x : tensor<3xf32>
  // expected-error @+1 {{cannot lower to the runtime: no kernel for 'test.foo'}}
  %0 = "test.foo"(%r) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Not a stage: nothing is lowered, nothing is reported.
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = hps.onnx_node "Foo"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
