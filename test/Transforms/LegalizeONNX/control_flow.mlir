// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// If (opsets 1-20) on a constant condition becomes the taken branch, which
// reads outer values directly.
// CHECK-LABEL: func @if_constant
func.func @if_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = hps.constant dense<false> : tensor<i1>
  // CHECK-NOT: hps.onnx_node
  // CHECK: %[[N:.*]] = hps.neg %arg0 : tensor<3xf32>
  // CHECK-NEXT: return %[[N]]
  %0 = hps.onnx_node "If"(%c) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<3xf32> {
    %1 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>) -> tensor<3xf32>
    hps.yield %1 : tensor<3xf32>
  }, {
    %1 = hps.onnx_node "Neg"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<3xf32>) -> tensor<3xf32>
    hps.yield %1 : tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}

// -----

// On a condition computed at run time both branches run and hps.where
// picks; a condition of shape [1] is reshaped to rank 0 so that it
// broadcasts over every output.
// CHECK-LABEL: func @if_runtime
func.func @if_runtime(%c: tensor<1xi1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  // CHECK-DAG: %[[R:.*]] = hps.relu %arg1
  // CHECK-DAG: %[[N:.*]] = hps.neg %arg1
  // CHECK-DAG: %[[C:.*]] = hps.reshape %arg0 {shape = array<i64>} : (tensor<1xi1>) -> tensor<i1>
  // CHECK: hps.where %[[C]], %[[R]], %[[N]] : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: hps.where %[[C]], {{.*}} : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %0:2 = hps.onnx_node "If"(%c) {attrs = {}, domain = "", opset = 16 : i64, subgraphs = ["then_branch", "else_branch"]} : (tensor<1xi1>) -> (tensor<3xf32>, tensor<f32>) {
    %1 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<3xf32>) -> tensor<3xf32>
    %2 = hps.constant dense<1.0> : tensor<f32>
    hps.yield %1, %2 : tensor<3xf32>, tensor<f32>
  }, {
    %1 = hps.onnx_node "Neg"(%x) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<3xf32>) -> tensor<3xf32>
    %2 = hps.constant dense<2.0> : tensor<f32>
    hps.yield %1, %2 : tensor<3xf32>, tensor<f32>
  }
  return %0#0, %0#1 : tensor<3xf32>, tensor<f32>
}

// -----

// Branches of different shapes under a run-time condition stay generic.
// CHECK-LABEL: func @if_runtime_shapes_differ
func.func @if_runtime_shapes_differ(%c: tensor<i1>, %x: tensor<3xf32>, %y: tensor<2xf32>) -> tensor<?xf32> {
  // CHECK: hps.onnx_node "If"
  %0 = hps.onnx_node "If"(%c) {attrs = {}, domain = "", opset = 16 : i64, subgraphs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<?xf32> {
    hps.yield %x : tensor<3xf32>
  }, {
    hps.yield %y : tensor<2xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

// Loop (opsets 1-20) with a constant trip count and a passed-through
// condition is unrolled: each copy gets its iteration number as a constant
// (here a Gather index), the loop-carried value threads through, and the
// scan output stacks the copies' values along a new axis 0.
// CHECK-LABEL: func @loop_for
func.func @loop_for(%seq: tensor<3x2xf32>, %h: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %n = hps.constant dense<3> : tensor<i64>
  %none = hps.none
  // CHECK-NOT: hps.onnx_node
  // CHECK: %[[X0:.*]] = hps.gather %arg0, {{.*}}
  // CHECK: %[[H1:.*]] = hps.add %arg1, %[[X0]]
  // CHECK: %[[X1:.*]] = hps.gather %arg0, {{.*}}
  // CHECK: %[[H2:.*]] = hps.add %[[H1]], %[[X1]]
  // CHECK: %[[X2:.*]] = hps.gather %arg0, {{.*}}
  // CHECK: %[[H3:.*]] = hps.add %[[H2]], %[[X2]]
  // CHECK-DAG: %[[U1:.*]] = hps.unsqueeze %[[H1]] {axes = array<i64: 0>}
  // CHECK-DAG: %[[U2:.*]] = hps.unsqueeze %[[H2]] {axes = array<i64: 0>}
  // CHECK-DAG: %[[U3:.*]] = hps.unsqueeze %[[H3]] {axes = array<i64: 0>}
  // CHECK: %[[S:.*]] = hps.concat %[[U1]], %[[U2]], %[[U3]] {axis = 0 : i64}
  // CHECK: return %[[H3]], %[[S]]
  %0:2 = hps.onnx_node "Loop"(%n, %none, %h) {attrs = {}, domain = "", opset = 16 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<*xf32>):
    %x = hps.onnx_node "Gather"(%seq, %i) {attrs = {axis = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>
    %next = hps.onnx_node "Add"(%acc, %x) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<*xf32>, tensor<2xf32>) -> tensor<*xf32>
    hps.yield %cond, %next, %next : tensor<i1>, tensor<*xf32>, tensor<*xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// A body condition that is a constant false ends the loop after one
// iteration whatever the trip count.
// CHECK-LABEL: func @loop_exit_after_one
func.func @loop_exit_after_one(%x: tensor<2xf32>) -> tensor<2xf32> {
  %n = hps.constant dense<100> : tensor<i64>
  %none = hps.none
  // CHECK: %[[E:.*]] = hps.exp %arg0
  // CHECK-NOT: hps.exp
  // CHECK: return %[[E]]
  %0 = hps.onnx_node "Loop"(%n, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %stop = hps.constant dense<false> : tensor<i1>
    %next = hps.onnx_node "Exp"(%acc) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2xf32>) -> tensor<2xf32>
    hps.yield %stop, %next : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// A trip count computed at run time, or a condition the body computes from
// data, leaves the Loop generic (the strict pass says why; see
// control_flow_errors.mlir).
// CHECK-LABEL: func @loop_runtime
func.func @loop_runtime(%n: tensor<i64>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %none = hps.none
  %m = hps.constant dense<4> : tensor<i64>
  // CHECK: hps.onnx_node "Loop"(%arg0
  %0 = hps.onnx_node "Loop"(%n, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    hps.yield %cond, %acc : tensor<i1>, tensor<2xf32>
  }
  // CHECK: hps.onnx_node "Loop"
  %1 = hps.onnx_node "Loop"(%m, %none, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %s = hps.onnx_node "ReduceSum"(%acc) {attrs = {keepdims = 0 : i64}, domain = "", opset = 13 : i64} : (tensor<2xf32>) -> tensor<f32>
    %zero = hps.constant dense<0.0> : tensor<f32>
    %go = hps.onnx_node "Greater"(%s, %zero) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    hps.yield %go, %acc : tensor<i1>, tensor<2xf32>
  }
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Scan (opsets 9-20) is unrolled over the static sequence length: each step
// reads its slice (backwards for direction 1) and the scan output stacks
// along scan_output_axes.
// CHECK-LABEL: func @scan_reverse
func.func @scan_reverse(%s0: tensor<2xf32>, %x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  // CHECK: %[[X2:.*]] = hps.slice %arg1 {axes = array<i64: 1>, ends = array<i64: 3>, starts = array<i64: 2>, steps = array<i64: 1>}
  // CHECK: %[[R2:.*]] = hps.reshape %[[X2]] {shape = array<i64: 2>}
  // CHECK: %[[S1:.*]] = hps.add %arg0, %[[R2]]
  // CHECK: hps.slice %arg1 {axes = array<i64: 1>, ends = array<i64: 2>, starts = array<i64: 1>, steps = array<i64: 1>}
  // CHECK: %[[S2:.*]] = hps.add %[[S1]]
  // CHECK: hps.slice %arg1 {axes = array<i64: 1>, ends = array<i64: 1>, starts = array<i64: 0>, steps = array<i64: 1>}
  // CHECK: %[[S3:.*]] = hps.add %[[S2]]
  // CHECK-DAG: %[[U1:.*]] = hps.unsqueeze %[[S1]] {axes = array<i64: 1>}
  // CHECK-DAG: %[[U2:.*]] = hps.unsqueeze %[[S2]] {axes = array<i64: 1>}
  // CHECK-DAG: %[[U3:.*]] = hps.unsqueeze %[[S3]] {axes = array<i64: 1>}
  // CHECK: %[[ST:.*]] = hps.concat %[[U1]], %[[U2]], %[[U3]] {axis = 1 : i64}
  // CHECK: return %[[S3]], %[[ST]]
  %0:2 = hps.onnx_node "Scan"(%s0, %x) {attrs = {num_scan_inputs = 1 : i64, scan_input_axes = array<i64: -1>, scan_input_directions = array<i64: 1>, scan_output_axes = array<i64: 1>}, domain = "", opset = 11 : i64, subgraphs = ["body"]} : (tensor<2xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
    %1 = hps.onnx_node "Add"(%s, %xt) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    hps.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<2x3xf32>
}

// -----

// Scan-8 (a batch axis 0 on every input, scan inputs scanned along axis 1)
// becomes one Scan-9 per batch element on that element's slices, stacked
// back along axis 0.
// CHECK-LABEL: func @scan_8
func.func @scan_8(%s0: tensor<2x2xf32>, %x: tensor<2x3x2xf32>) -> (tensor<2x2xf32>, tensor<2x3x2xf32>) {
  %none = hps.none
  // CHECK-NOT: hps.onnx_node
  // CHECK: hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 1>, starts = array<i64: 0>
  // CHECK-COUNT-3: hps.add
  // CHECK: hps.slice %arg0 {axes = array<i64: 0>, ends = array<i64: 2>, starts = array<i64: 1>
  // CHECK-COUNT-3: hps.add
  // CHECK: %[[S:.*]] = hps.concat {{.*}} {axis = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  // CHECK: %[[Z:.*]] = hps.concat {{.*}} {axis = 0 : i64} : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<2x3x2xf32>
  // CHECK: return %[[S]], %[[Z]]
  %0:2 = hps.onnx_node "Scan"(%none, %s0, %x) {attrs = {num_scan_inputs = 1 : i64}, domain = "", opset = 8 : i64, subgraphs = ["body"]} : (none, tensor<2x2xf32>, tensor<2x3x2xf32>) -> (tensor<2x2xf32>, tensor<2x3x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %xt: tensor<2xf32>):
    %1 = hps.onnx_node "Add"(%s, %xt) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    hps.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x3x2xf32>
}

// -----

// A while loop over a counter: the body computes the condition, so one
// iteration at a time is taken off the front (the rest of the loop starts
// at the next iteration number) until the condition folds to false.
// CHECK-LABEL: func @loop_while_counter
func.func @loop_while_counter(%x: tensor<2xf32>) -> tensor<2xf32> {
  %none = hps.none
  %go = hps.constant dense<true> : tensor<i1>
  %zero = hps.constant dense<0> : tensor<i64>
  // CHECK-NOT: hps.onnx_node
  // CHECK: %[[A:.*]] = hps.exp %arg0
  // CHECK: %[[B:.*]] = hps.exp %[[A]]
  // CHECK-NOT: hps.exp
  // CHECK: return %[[B]]
  %0:2 = hps.onnx_node "Loop"(%none, %go, %zero, %x) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (none, tensor<i1>, tensor<i64>, tensor<2xf32>) -> (tensor<i64>, tensor<2xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %k: tensor<i64>, %acc: tensor<2xf32>):
    %one = hps.constant dense<1> : tensor<i64>
    %two = hps.constant dense<2> : tensor<i64>
    %k1 = hps.onnx_node "Add"(%k, %one) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %more = hps.onnx_node "Less"(%k1, %two) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %e = hps.onnx_node "Exp"(%acc) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2xf32>) -> tensor<2xf32>
    hps.yield %more, %k1, %e : tensor<i1>, tensor<i64>, tensor<2xf32>
  }
  return %0#1 : tensor<2xf32>
}
