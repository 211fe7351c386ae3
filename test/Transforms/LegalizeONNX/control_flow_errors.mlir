// RUN: heterps-opt --hps-legalize-onnx=strict --split-input-file -verify-diagnostics %s

// Control flow that cannot be resolved at compile time is refused with the
// reason; the nodes of its body are not reported on their own.
func.func @trip_count(%n: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %none = hps.none
  // expected-error @+1 {{no legalization for ONNX op 'Loop' (domain '', opset 13): its trip count is computed at run time}}
  %0 = hps.onnx_node "Loop"(%n, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %s = hps.onnx_node "Slice"(%acc, %i, %i) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2xf32>, tensor<i64>, tensor<i64>) -> tensor<2xf32>
    hps.yield %cond, %s : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @while_loop(%x: tensor<2xf32>) -> tensor<2xf32> {
  %none = hps.none
  %go = hps.constant dense<true> : tensor<i1>
  // The body computes the condition: one iteration is peeled off, and the
  // condition it yields is known only at run time.
  // expected-error @+1 {{its condition after iteration 0 depends on values computed at run time}}
  %0 = hps.onnx_node "Loop"(%none, %go, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (none, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %s = hps.onnx_node "ReduceSum"(%acc) {attrs = {keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xf32>) -> tensor<f32>
    %zero = hps.constant dense<0.0> : tensor<f32>
    %more = hps.onnx_node "Greater"(%s, %zero) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    hps.yield %more, %acc : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @infinite(%x: tensor<2xf32>) -> tensor<2xf32> {
  %none = hps.none
  // expected-error @+1 {{it has no trip count and its condition never turns false}}
  %0 = hps.onnx_node "Loop"(%none, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (none, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    hps.yield %cond, %acc : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @too_long(%x: tensor<2xf32>) -> tensor<2xf32> {
  %none = hps.none
  %n = hps.constant dense<1000000> : tensor<i64>
  // expected-error @+1 {{unrolling its 1000000 iterations would copy more than 65536 ops}}
  %0 = hps.onnx_node "Loop"(%n, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %e = hps.onnx_node "Exp"(%acc) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2xf32>) -> tensor<2xf32>
    hps.yield %cond, %e : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @if_shapes(%c: tensor<i1>, %x: tensor<3xf32>, %y: tensor<2xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{its condition is computed at run time and its branches yield output 0 with different or unknown types}}
  %0 = hps.onnx_node "If"(%c) {attrs = {}, domain = "", opset = 16 : i64, subgraphs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<?xf32> {
    hps.yield %x : tensor<3xf32>
  }, {
    hps.yield %y : tensor<2xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

func.func @scan_8_lengths(%s0: tensor<2x2xf32>, %x: tensor<2x3x2xf32>) -> tensor<2x2xf32> {
  %lens = hps.constant dense<[3, 2]> : tensor<2xi64>
  // expected-error @+1 {{its sequence_lens are not all the full length}}
  %0:2 = hps.onnx_node "Scan"(%lens, %s0, %x) {attrs = {num_scan_inputs = 1 : i64}, domain = "", opset = 8 : i64, subgraphs = ["body"]} : (tensor<2xi64>, tensor<2x2xf32>, tensor<2x3x2xf32>) -> (tensor<2x2xf32>, tensor<2x3x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
    %1 = hps.onnx_node "Add"(%s, %xt) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    hps.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0 : tensor<2x2xf32>
}

// -----

func.func @scan_dynamic(%s0: tensor<2xf32>, %x: tensor<?x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{scan input 0 has no static shape}}
  %0:2 = hps.onnx_node "Scan"(%s0, %x) {attrs = {num_scan_inputs = 1 : i64}, domain = "", opset = 16 : i64, subgraphs = ["body"]} : (tensor<2xf32>, tensor<?x2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
    %1 = hps.onnx_node "Add"(%s, %xt) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    hps.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0 : tensor<2xf32>
}

// -----

func.func @while_with_scan(%x: tensor<2xf32>) -> tensor<3x2xf32> {
  %none = hps.none
  %go = hps.constant dense<true> : tensor<i1>
  %three = hps.constant dense<3> : tensor<i64>
  // expected-error @+1 {{its body computes the loop condition and it has scan outputs (only loop-carried values are supported there)}}
  %0:2 = hps.onnx_node "Loop"(%none, %go, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (none, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %more = hps.onnx_node "Less"(%i, %three) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    hps.yield %more, %acc, %acc : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %0#1 : tensor<3x2xf32>
}

// -----

func.func @sequence_at_run_time(%x: tensor<2xf32>, %pos: tensor<i64>) -> tensor<2xf32> {
  // expected-error @+1 {{no legalization for ONNX op 'SequenceConstruct' (domain '', opset 11): a node reading this sequence could not be resolved at compile time}}
  %s = hps.onnx_node "SequenceConstruct"(%x, %x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2xf32>, tensor<2xf32>) -> !hps.sequence<tensor<2xf32>>
  // A position known only at run time keeps SequenceAt generic.
  // expected-error @+1 {{no legalization for ONNX op 'SequenceAt' (domain '', opset 11): the position is not a constant in range}}
  %e = hps.onnx_node "SequenceAt"(%s, %pos) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<2xf32>>, tensor<i64>) -> tensor<2xf32>
  return %e : tensor<2xf32>
}
