// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Attention (23) on 4-D Q, K, V: Q scaled by 1/sqrt(head size), times K^T,
// softmax over the keys, times V. No mask: no bias and no guard.
// CHECK-LABEL: func @attention_4d
func.func @attention_4d(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x5x8xf32>, %v: tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32> {
  // CHECK: %[[SCALE:.*]] = hps.constant dense<0.353553385> : tensor<f32>
  // CHECK: %[[Q:.*]] = hps.mul %arg0, %[[SCALE]]
  // CHECK: %[[KT:.*]] = hps.transpose %arg1 {perm = array<i64: 0, 1, 3, 2>}
  // CHECK: %[[S:.*]] = hps.matmul %[[Q]], %[[KT]] : (tensor<2x3x5x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x5x5xf32>
  // CHECK: %[[P:.*]] = hps.softmax %[[S]] {axis = 3 : i64}
  // CHECK: %[[Y:.*]] = hps.matmul %[[P]], %arg2 : (tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  // CHECK: return %[[Y]]
  // CHECK-NOT: hps.where
  %0 = hps.onnx_node "Attention"(%q, %k, %v) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %0 : tensor<2x3x5x4xf32>
}

// -----

// 3-D inputs with grouped heads (4 query heads, 2 kv heads): each input is
// viewed as [B, heads, S, size]; query heads share their kv head through a
// [B, 2, 2 * S, 8] view of Q, not copies of K and V. is_causal adds a
// constant [S, S] bias of 0 and -inf.
// CHECK-LABEL: func @attention_3d_grouped_causal
func.func @attention_3d_grouped_causal(%q: tensor<2x3x32xf32>, %k: tensor<2x3x16xf32>, %v: tensor<2x3x16xf32>) -> tensor<2x3x32xf32> {
  // CHECK: %[[CAUSAL:.*]] = hps.constant dense<{{\[}}[0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
  // CHECK: hps.reshape %arg0 {shape = array<i64: 2, 3, 4, 8>}
  // CHECK: hps.transpose {{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x4x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK: %[[GROUPED:.*]] = hps.reshape {{.*}} {shape = array<i64: 2, 2, 6, 8>}
  // CHECK: %[[S:.*]] = hps.matmul %[[GROUPED]], {{.*}} -> tensor<2x2x6x3xf32>
  // CHECK: %[[HEADS:.*]] = hps.reshape %[[S]] {shape = array<i64: 2, 4, 3, 3>}
  // CHECK: %[[B:.*]] = hps.add %[[HEADS]], %[[CAUSAL]]
  // CHECK: %[[P:.*]] = hps.softmax %[[B]]
  // CHECK: hps.reshape %[[P]] {shape = array<i64: 2, 2, 6, 3>}
  // CHECK: hps.matmul {{.*}} -> tensor<2x2x6x8xf32>
  // CHECK: hps.transpose {{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x3x8xf32>) -> tensor<2x3x4x8xf32>
  // CHECK: hps.reshape {{.*}} {shape = array<i64: 2, 3, 32>}
  %0 = hps.onnx_node "Attention"(%q, %k, %v) {attrs = {q_num_heads = 4 : i64, kv_num_heads = 2 : i64, is_causal = 1 : i64}, domain = "", opset = 23 : i64} : (tensor<2x3x32xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x32xf32>
  return %0 : tensor<2x3x32xf32>
}

// -----

// A bool mask becomes a 0 / -inf bias, padded with -inf to the key count.
// A row with every key masked must give zeros (not NaN): its bias is
// zeroed before the softmax and its probabilities after.
// CHECK-LABEL: func @attention_bool_mask
func.func @attention_bool_mask(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<3x3xi1>) -> tensor<1x2x3x8xf32> {
  // CHECK-DAG: %[[PAD:.*]] = hps.constant dense<0xFF800000> : tensor<3x1xf32>
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[NEGINF:.*]] = hps.constant dense<0xFF800000> : tensor<f32>
  // CHECK: %[[MB:.*]] = hps.where %arg3, %[[ZERO]], %[[NEGINF]] : (tensor<3x3xi1>, tensor<f32>, tensor<f32>) -> tensor<3x3xf32>
  // CHECK: %[[BIAS:.*]] = hps.concat %[[MB]], %[[PAD]] {axis = 1 : i64}
  // CHECK: %[[MAX:.*]] = hps.reduce  max %[[BIAS]] {axes = array<i64: 1>, keepdims}
  // CHECK: %[[EMPTY:.*]] = hps.equal %[[MAX]], %[[NEGINF]]
  // CHECK: %[[SAFE:.*]] = hps.where %[[EMPTY]], %[[ZERO]], %[[BIAS]]
  // CHECK: %[[SUM:.*]] = hps.add {{.*}}, %[[SAFE]]
  // CHECK: %[[P:.*]] = hps.softmax %[[SUM]]
  // CHECK: %[[GUARDED:.*]] = hps.where %[[EMPTY]], %[[ZERO]], %[[P]]
  // CHECK: hps.matmul %[[GUARDED]], %arg2
  %0 = hps.onnx_node "Attention"(%q, %k, %v, %m) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<1x2x3x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<3x3xi1>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// The past cache: present_key and present_value are the concatenations;
// the causal mask is offset by the 3 past positions (query i sees keys up
// to i + 3). qk_matmul_output mode 1 is the soft-capped product.
// CHECK-LABEL: func @attention_past_softcap
func.func @attention_past_softcap(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x2x8xf32>, %v: tensor<1x2x2x8xf32>, %pk: tensor<1x2x3x8xf32>, %pv: tensor<1x2x3x8xf32>) -> (tensor<1x2x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x2x5xf32>) {
  %none = hps.none
  // CHECK: %[[CAUSAL:.*]] = hps.constant dense<{{\[}}[0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x5xf32>
  // CHECK: %[[K:.*]] = hps.concat %arg3, %arg1 {axis = 2 : i64}
  // CHECK: %[[V:.*]] = hps.concat %arg4, %arg2 {axis = 2 : i64}
  // CHECK: %[[S:.*]] = hps.matmul
  // CHECK: %[[D:.*]] = hps.div %[[S]], %[[CAP:.*]] :
  // CHECK: %[[T:.*]] = hps.tanh %[[D]]
  // CHECK: %[[CAPPED:.*]] = hps.mul %[[T]], %[[CAP]]
  // CHECK: hps.add %[[CAPPED]], %[[CAUSAL]]
  // CHECK: return %{{.*}}, %[[K]], %[[V]], %[[CAPPED]]
  %0:4 = hps.onnx_node "Attention"(%q, %k, %v, %none, %pk, %pv) {attrs = {is_causal = 1 : i64, softcap = 2.0 : f32, qk_matmul_output_mode = 1 : i64}, domain = "", opset = 23 : i64} : (tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, none, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> (tensor<1x2x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x2x5xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1x2x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x2x5xf32>
}

// -----

// nonpad_kv_seqlen (24): key j of sample b counts iff j < lengths[b]; with
// is_causal, query i sees key j iff j - i + 2 <= lengths[b]. Both are
// computed at run time.
// CHECK-LABEL: func @attention_nonpad_causal
func.func @attention_nonpad_causal(%q: tensor<2x1x2x4xf32>, %k: tensor<2x1x3x4xf32>, %v: tensor<2x1x3x4xf32>, %n: tensor<2xi64>) -> tensor<2x1x2x4xf32> {
  %none = hps.none
  // CHECK-DAG: %[[REACH:.*]] = hps.constant dense<{{\[\[\[}}[2, 3, 4], [1, 2, 3]]]]> : tensor<1x1x2x3xi64>
  // CHECK-DAG: %[[KEYS:.*]] = hps.constant dense<{{\[\[\[}}[0, 1, 2]]]]> : tensor<1x1x1x3xi64>
  // CHECK: %[[N:.*]] = hps.reshape %arg3 {shape = array<i64: 2, 1, 1, 1>}
  // CHECK: %[[REAL:.*]] = hps.less %[[KEYS]], %[[N]] : tensor<1x1x1x3xi64>, tensor<2x1x1x1xi64> -> tensor<2x1x1x3xi1>
  // CHECK: %[[SEEN:.*]] = hps.less_equal %[[REACH]], %[[N]] : tensor<1x1x2x3xi64>, tensor<2x1x1x1xi64> -> tensor<2x1x2x3xi1>
  // CHECK: %[[ALLOWED:.*]] = hps.and %[[REAL]], %[[SEEN]]
  // CHECK: hps.where %[[ALLOWED]]
  // CHECK: hps.reduce  max
  // CHECK: hps.softmax
  %0 = hps.onnx_node "Attention"(%q, %k, %v, %none, %none, %none, %n) {attrs = {is_causal = 1 : i64}, domain = "", opset = 24 : i64} : (tensor<2x1x2x4xf32>, tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32>, none, none, none, tensor<2xi64>) -> tensor<2x1x2x4xf32>
  return %0 : tensor<2x1x2x4xf32>
}

// -----

// Sliding windows (25), constant: query i sees keys i - 1 to i.
// CHECK-LABEL: func @attention_window
func.func @attention_window(%q: tensor<1x1x3x4xf32>, %k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32> {
  // CHECK: hps.constant dense<{{\[}}[0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000], [0xFF800000, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
  // CHECK-NOT: hps.reduce
  %0 = hps.onnx_node "Attention"(%q, %k, %v) {attrs = {is_causal = 1 : i64, left_window_size = 1 : i64}, domain = "", opset = 25 : i64} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  return %0 : tensor<1x1x3x4xf32>
}

// -----

// What stays generic: window attributes before 25, 7 query heads over 2 kv
// heads, a double-precision softmax, nonpad_kv_seqlen with a past cache,
// Q and K of different head sizes, a dynamic shape.
// CHECK-LABEL: func @attention_generic
func.func @attention_generic(%q: tensor<1x1x3x4xf32>, %q7: tensor<1x7x3x4xf32>, %k2: tensor<1x2x3x4xf32>, %k8: tensor<1x1x3x8xf32>, %qd: tensor<?x1x3x4xf32>, %pk: tensor<1x1x2x4xf32>, %n: tensor<1xi64>) -> (tensor<1x1x3x4xf32>, tensor<1x7x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<?x1x3x4xf32>) {
  %none = hps.none
  // CHECK-COUNT-6: hps.onnx_node "Attention"
  %0 = hps.onnx_node "Attention"(%q, %q, %q) {attrs = {left_window_size = 1 : i64}, domain = "", opset = 24 : i64} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %1 = hps.onnx_node "Attention"(%q7, %k2, %k2) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<1x7x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x7x3x4xf32>
  %2 = hps.onnx_node "Attention"(%q, %q, %q) {attrs = {softmax_precision = 11 : i64}, domain = "", opset = 23 : i64} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %3 = hps.onnx_node "Attention"(%q, %q, %q, %none, %pk, %pk, %n) {attrs = {}, domain = "", opset = 24 : i64} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, none, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1xi64>) -> tensor<1x1x3x4xf32>
  %4 = hps.onnx_node "Attention"(%q, %k8, %q) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<1x1x3x4xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %5 = hps.onnx_node "Attention"(%qd, %qd, %qd) {attrs = {}, domain = "", opset = 23 : i64} : (tensor<?x1x3x4xf32>, tensor<?x1x3x4xf32>, tensor<?x1x3x4xf32>) -> tensor<?x1x3x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x1x3x4xf32>, tensor<1x7x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<?x1x3x4xf32>
}
