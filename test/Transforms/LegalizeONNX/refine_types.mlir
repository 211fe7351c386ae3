// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// A channel shuffle whose Reshape target is computed from Shape: ONNX
// shape inference leaves everything after it unranked. Once the shape
// chain folds, the Reshape, the Conv, the Relu and the MaxPool after it
// get static types, so the second Conv (which needs a ranked input)
// legalizes too.
// CHECK-LABEL: func @channel_shuffle
func.func @channel_shuffle(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>, %w2: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x4x8x8xf32>) -> tensor<4xi64>
  %r = hps.onnx_node "Reshape"(%x, %s) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x4x8x8xf32>, tensor<4xi64>) -> tensor<*xf32>
  // CHECK: hps.conv %{{.*}} {{.*}}group = 4{{.*}} -> tensor<1x4x8x8xf32>
  %c = hps.onnx_node "Conv"(%r, %w) {attrs = {group = 4 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<4x1x3x3xf32>) -> tensor<*xf32>
  // CHECK: hps.relu %{{.*}} : tensor<1x4x8x8xf32>
  %a = hps.onnx_node "Relu"(%c) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.max_pool {{.*}} -> tensor<1x4x4x4xf32>
  %p = hps.onnx_node "MaxPool"(%a) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.conv {{.*}} -> tensor<1x4x4x4xf32>
  // CHECK-NOT: hps.onnx_node
  %d = hps.onnx_node "Conv"(%p, %w2) {attrs = {kernel_shape = array<i64: 1, 1>}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %d : tensor<1x4x4x4xf32>
}

// -----

// A ViT's class token: Expand to a shape computed from the batch gives a
// result ONNX types [?, ?, 8]; once the shape folds, the Expand (here an
// identity, so it folds away) and the Concat and Add after it are static.
// CHECK-LABEL: func @class_token
func.func @class_token(%x: tensor<1x3x8xf32>, %token: tensor<1x1x8xf32>, %pos: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %s = hps.onnx_node "Shape"(%x) {attrs = {end = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<1x3x8xf32>) -> tensor<1xi64>
  %ones = hps.constant dense<1> : tensor<2xi64>
  %shape = hps.onnx_node "Concat"(%s, %ones) {attrs = {axis = 0 : i64}, domain = "", opset = 17 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %e = hps.onnx_node "Expand"(%token, %shape) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x1x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  // CHECK: hps.concat %arg1, %arg0 {{.*}} -> tensor<1x4x8xf32>
  %c = hps.onnx_node "Concat"(%e, %x) {attrs = {axis = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<?x?x8xf32>, tensor<1x3x8xf32>) -> tensor<1x?x8xf32>
  // CHECK: hps.add {{.*}} : tensor<1x4x8xf32>
  %a = hps.onnx_node "Add"(%c, %pos) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x?x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %a : tensor<1x4x8xf32>
}

// -----

// A transformer's position embeddings: the ids are a Slice whose end ONNX
// computes from the input's Shape, so the Gather (an embedding lookup of a
// weight) is typed [1, ?, 8] and everything after it too (BERT, GPT-2 and
// T5 as PyTorch exports them). Once the Slice is static, the lookup's
// result and the Add after it are static.
// CHECK-LABEL: func @position_embeddings
func.func @position_embeddings(%x: tensor<2x4x8xf32>, %positions: tensor<1x16xi64>) -> tensor<2x4x8xf32> {
  %table = hps.weight "wpe" dense<0.5> : tensor<16x8xf32>
  %s = hps.onnx_node "Shape"(%x) {attrs = {start = 1 : i64, end = 2 : i64}, domain = "", opset = 17 : i64} : (tensor<2x4x8xf32>) -> tensor<1xi64>
  %zero = hps.constant dense<0> : tensor<1xi64>
  %one = hps.constant dense<1> : tensor<1xi64>
  %ids = hps.onnx_node "Slice"(%positions, %zero, %s, %one) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<1x16xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  // CHECK: %[[E:.*]] = hps.embedding_lookup %{{.*}}, %{{.*}} : (tensor<16x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %e = hps.onnx_node "Gather"(%table, %ids) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<16x8xf32>, tensor<1x?xi64>) -> tensor<1x?x8xf32>
  // CHECK: hps.add %arg0, %[[E]] : tensor<2x4x8xf32>, tensor<1x4x8xf32> -> tensor<2x4x8xf32>
  %a = hps.onnx_node "Add"(%x, %e) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x4x8xf32>, tensor<1x?x8xf32>) -> tensor<2x4x8xf32>
  return %a : tensor<2x4x8xf32>
}

// -----

// A Split of a value ONNX left unranked (Funnel's and GPT-J's exports split
// a reshaped tensor): once its input is static, every piece gets its shape
// and the Expand after it (which needs a ranked input) legalizes.
// CHECK-LABEL: func @split_pieces
func.func @split_pieces(%x: tensor<2x4x2xf32>) -> tensor<2x4x3xf32> {
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x4x2xf32>) -> tensor<3xi64>
  %r = hps.onnx_node "Reshape"(%x, %s) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x4x2xf32>, tensor<3xi64>) -> tensor<*xf32>
  %sizes = hps.constant dense<[1, 1]> : tensor<2xi64>
  // CHECK: %[[P:.*]]:2 = hps.split %arg0 {axis = 2 : i64, sizes = array<i64: 1, 1>} : (tensor<2x4x2xf32>) -> (tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  %p:2 = hps.onnx_node "Split"(%r, %sizes) {attrs = {axis = -1 : i64}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  %shape = hps.constant dense<[2, 4, 3]> : tensor<3xi64>
  // CHECK: hps.expand %[[P]]#1 {{.*}} : (tensor<2x4x1xf32>) -> tensor<2x4x3xf32>
  // CHECK-NOT: hps.onnx_node
  %e = hps.onnx_node "Expand"(%p#1, %shape) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<3xi64>) -> tensor<2x4x3xf32>
  return %e : tensor<2x4x3xf32>
}

// -----

// Refinement asks each hps op's InferShapedTypeOpInterface: an unranked
// chain through the matmul, transpose, softmax, reduce, squeeze and concat
// rules becomes static, and the Flatten at its end (an identity) folds.
// CHECK-LABEL: func @shape_rules
func.func @shape_rules(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>) -> tensor<2x15xf32> {
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %r = hps.onnx_node "Reshape"(%x, %s) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<*xf32>
  // CHECK: hps.matmul {{.*}} -> tensor<2x3x5xf32>
  %m = hps.onnx_node "MatMul"(%r, %w) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  // CHECK: hps.transpose {{.*}} -> tensor<2x5x3xf32>
  %t = hps.onnx_node "Transpose"(%m) {attrs = {perm = array<i64: 0, 2, 1>}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.softmax {{.*}} -> tensor<2x5x3xf32>
  %sm = hps.onnx_node "Softmax"(%t) {attrs = {axis = -1 : i64}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.reduce mean {{.*}} -> tensor<2x5x1xf32>
  %red = hps.onnx_node "ReduceMean"(%sm) {attrs = {axes = array<i64: 2>, keepdims = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.squeeze {{.*}} -> tensor<2x5xf32>
  %u = hps.onnx_node "Squeeze"(%red) {attrs = {axes = array<i64: 2>}, domain = "", opset = 11 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: %[[C:.*]] = hps.concat {{.*}} -> tensor<2x15xf32>
  %c = hps.onnx_node "Concat"(%u, %u, %u) {attrs = {axis = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK-NEXT: return %[[C]]
  %f = hps.onnx_node "Flatten"(%c) {attrs = {axis = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<2x15xf32>
  return %f : tensor<2x15xf32>
}

// -----

// More rules on the way: batch_norm, determinant, gemm (whose operands must
// be ranked to legalize), where, global_avg_pool and flatten.
// CHECK-LABEL: func @more_shape_rules
func.func @more_shape_rules(%x: tensor<2x3x4x4xf32>, %scale: tensor<3xf32>, %b: tensor<3x6xf32>, %cond: tensor<2x6xi1>) -> tensor<2x6xf32> {
  %s = hps.onnx_node "Shape"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3x4x4xf32>) -> tensor<4xi64>
  %r = hps.onnx_node "Reshape"(%x, %s) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3x4x4xf32>, tensor<4xi64>) -> tensor<*xf32>
  // CHECK: hps.batch_norm {{.*}} -> tensor<2x3x4x4xf32>
  %bn = hps.onnx_node "BatchNormalization"(%r, %scale, %scale, %scale, %scale) {attrs = {}, domain = "", opset = 15 : i64} : (tensor<*xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32>
  // CHECK: hps.determinant {{.*}} -> tensor<2x3xf32>
  %d = hps.onnx_node "Det"(%bn) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.gemm {{.*}} -> tensor<2x6xf32>
  %g = hps.onnx_node "Gemm"(%d, %b) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<3x6xf32>) -> tensor<*xf32>
  %z = hps.constant dense<0.0> : tensor<f32>
  // CHECK: %[[W:.*]] = hps.where {{.*}} -> tensor<2x6xf32>
  %w = hps.onnx_node "Where"(%cond, %g, %z) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x6xi1>, tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  // CHECK: hps.global_avg_pool {{.*}} -> tensor<2x3x1x1xf32>
  %p = hps.onnx_node "GlobalAveragePool"(%r) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: hps.flatten {{.*}} -> tensor<2x3xf32>
  %pf = hps.onnx_node "Flatten"(%p) {attrs = {axis = 1 : i64}, domain = "", opset = 17 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: %[[G:.*]] = hps.gemm {{.*}} -> tensor<2x6xf32>
  %pg = hps.onnx_node "Gemm"(%pf, %b) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<3x6xf32>) -> tensor<*xf32>
  // CHECK: hps.add %[[W]], %[[G]] : tensor<2x6xf32>
  // CHECK-NOT: hps.onnx_node
  %a = hps.onnx_node "Add"(%w, %pg) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<2x6xf32>
  return %a : tensor<2x6xf32>
}
