// RUN: heterps-opt --hps-lower-to-runtime-calls -split-input-file %s | FileCheck %s

// Sparse lookups. An hps.embedding_lookup becomes hpsrt.embedding_lookup
// (rows and dim from the table, the id type and shape, the pooling). In an
// inference stage an hps.ps_pull reads the server's copy of its table: an
// hpsrt.server_table and a lookup in it. In a training module
// (hps.training) the server has no pooling: a pooled pull becomes a pull of
// the rows alone and an hpsrt.reduce (Sum or Mean over the ids' last axis);
// an unpooled pull, and the pushes, stay as they are (the printer writes
// them as calls of the stage's support functions).

// CHECK-LABEL: func.func @inference
func.func @inference(%t: tensor<100x8xf32>, %ids: tensor<4x3xi64>, %ids32: tensor<6xi32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x16xf32>, tensor<4x3x16xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[E:.*]] = "hpsrt.embedding_lookup"(%arg0, %arg1) <{dim = 8 : i64, idType = i64, ids = array<i64: 4, 3>, pooling = #hpsrt.embedding_pooling<Mean>, rows = 100 : i64, type = f32}> : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling mean>} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[E2:.*]] = "hpsrt.embedding_lookup"(%arg0, %arg2) <{dim = 8 : i64, idType = i32, ids = array<i64: 6>, pooling = #hpsrt.embedding_pooling<None>, rows = 100 : i64, type = f32}> : (tensor<100x8xf32>, tensor<6xi32>) -> tensor<6x8xf32>
  %e2 = hps.embedding_lookup %t, %ids32 : (tensor<100x8xf32>, tensor<6xi32>) -> tensor<6x8xf32>
  // CHECK-NEXT: %[[T:.*]] = hpsrt.server_table "table" : tensor<1000x16xf32>
  // CHECK-NEXT: %[[P:.*]] = "hpsrt.embedding_lookup"(%[[T]], %arg1) <{dim = 16 : i64, idType = i64, ids = array<i64: 4, 3>, pooling = #hpsrt.embedding_pooling<Sum>, rows = 1000 : i64, type = f32}> : (tensor<1000x16xf32>, tensor<4x3xi64>) -> tensor<4x16xf32>
  %p = hps.ps_pull "table"[%ids] {device = #hps.device<"cpu.xeon">, pooling = #hps<embedding_pooling sum>, table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x16xf32>
  // An unpooled pull is a lookup too, in the same server_table.
  // CHECK-NEXT: %[[P2:.*]] = "hpsrt.embedding_lookup"(%[[T]], %arg1) <{{.*}}pooling = #hpsrt.embedding_pooling<None>{{.*}}}> : (tensor<1000x16xf32>, tensor<4x3xi64>) -> tensor<4x3x16xf32>
  %p2 = hps.ps_pull "table"[%ids] {pooling = #hps<embedding_pooling none>, table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x3x16xf32>
  // CHECK-NOT: hps.ps_pull
  // CHECK-NEXT: return %[[E]], %[[E2]], %[[P]], %[[P2]]
  return %e, %e2, %p, %p2 : tensor<4x8xf32>, tensor<6x8xf32>, tensor<4x16xf32>, tensor<4x3x16xf32>
}

// -----

module attributes {hps.training = {label = "label", loss = "bce", optimizer = "sgd", prediction = "p"}} {
// CHECK-LABEL: func.func @training
func.func @training(%ids: tensor<4x3xi64>, %g: tensor<4x3x16xf32>, %gw: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x3x16xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // Sum pooling: the rows alone (pooling none, the default, is not
  // printed; the placement and discardable attributes are kept), then a Sum
  // over axis 1 of [4, 3, 16].
  // CHECK-NEXT: %[[R:.*]] = hps.ps_pull "table"[%arg0] {device = #hps.device<"cpu.xeon">, hps.backward, table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x3x16xf32>
  // CHECK-NEXT: %[[S:.*]] = "hpsrt.reduce"(%[[R]]) <{axes = array<i64: 1>, kind = #hpsrt.reduce_kind<Sum>, type = f32, x = array<i64: 4, 3, 16>, y = array<i64: 4, 16>}> {hps.backward} : (tensor<4x3x16xf32>) -> tensor<4x16xf32>
  %s = hps.ps_pull "table"[%ids] {device = #hps.device<"cpu.xeon">, pooling = #hps<embedding_pooling sum>, table_type = tensor<1000x16xf32>, hps.backward} : (tensor<4x3xi64>) -> tensor<4x16xf32>
  // Mean pooling.
  // CHECK-NEXT: %[[R2:.*]] = hps.ps_pull "table"[%arg0] {table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x3x16xf32>
  // CHECK-NEXT: %[[M:.*]] = "hpsrt.reduce"(%[[R2]]) <{axes = array<i64: 1>, kind = #hpsrt.reduce_kind<Mean>, type = f32, x = array<i64: 4, 3, 16>, y = array<i64: 4, 16>}> : (tensor<4x3x16xf32>) -> tensor<4x16xf32>
  %m = hps.ps_pull "table"[%ids] {pooling = #hps<embedding_pooling mean>, table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x16xf32>
  // An unpooled training pull, and the pushes, stay.
  // CHECK-NEXT: %[[U:.*]] = hps.ps_pull "table"[%arg0] {table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x3x16xf32>
  %u = hps.ps_pull "table"[%ids] {pooling = #hps<embedding_pooling none>, table_type = tensor<1000x16xf32>} : (tensor<4x3xi64>) -> tensor<4x3x16xf32>
  // CHECK-NEXT: hps.ps_push "table"[%arg0], %arg1
  hps.ps_push "table"[%ids], %g : tensor<4x3xi64>, tensor<4x3x16xf32>
  // CHECK-NEXT: hps.dense_push "w", %arg2
  hps.dense_push "w", %gw : tensor<16xf32>
  // CHECK-NOT: hpsrt.server_table
  // CHECK-NOT: hpsrt.embedding_lookup
  // CHECK-NEXT: return %[[S]], %[[M]], %[[U]]
  return %s, %m, %u : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x3x16xf32>
}
}
