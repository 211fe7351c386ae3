//===- HPSPipelineOps.td - Stage communication ops ---------*- tablegen -*-===//
//
// Ops that partitioning introduces: point-to-point channels between pipeline
// stages and the parameter-server traffic of sparse embedding tables.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_DIALECT_HPS_IR_HPSPIPELINEOPS_TD
#define HETERPS_DIALECT_HPS_IR_HPSPIPELINEOPS_TD

def HPS_SendOp : HPS_Op<"send"> {
  let summary = "Sends a tensor on a named channel to another stage";
  let description = [{
    Every tensor crossing a stage boundary travels on its own channel, named
    after the value and the receiving stage; exactly one `hps.recv` of the
    same type reads it. `@main` sends the graph inputs and receives the
    outputs.
  }];
  let arguments = (ins AnyTensor:$value, StrAttr:$channel);
  let assemblyFormat = "$value `to` $channel attr-dict `:` type($value)";
}

def HPS_RecvOp : HPS_Op<"recv"> {
  let summary = "Receives a tensor from a named channel";
  let results = (outs AnyTensor:$value);
  let arguments = (ins StrAttr:$channel);
  let assemblyFormat = "$channel attr-dict `:` type($value)";
}

def HPS_PSPullOp : HPS_Op<"ps_pull", [HPS_PlacedOpInterface,
                                     InferShapedTypeOpAdaptor]> {
  let summary = "Pulls the rows of a sparse table from the parameter server";
  let description = [{
    What an `hps.embedding_lookup` becomes in a stage: the table lives in the
    parameter server (keyed by the weight's name), only the rows of `ids` are
    pulled, then pooled as the lookup says.
  }];
  let arguments = (ins StrAttr:$table, TypeAttrOf<AnyRankedTensor>:$table_type,
                       AnyTensor:$ids,
                       DefaultValuedAttr<HPS_EmbeddingPoolingAttr,
                         "::heterps::hps::EmbeddingPooling::None">:$pooling,
                       OptionalAttr<HPS_DeviceAttr>:$device);
  let results = (outs AnyTensor:$rows);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type($ids, $rows)
  }];
  let hasVerifier = 1;
}

def HPS_PSPushOp : HPS_Op<"ps_push", [HPS_PlacedOpInterface]> {
  let summary = "Pushes gradients of pulled rows to the parameter server";
  let description = [{
    The backward counterpart of `hps.ps_pull` (emitted by autodiff): the
    gradients of the looked-up rows, keyed by the same ids; the server
    merges duplicate ids and applies the table's optimizer.
  }];
  let arguments = (ins StrAttr:$table, AnyTensor:$ids, AnyTensor:$gradients,
                       OptionalAttr<HPS_DeviceAttr>:$device);
  let assemblyFormat = [{
    $table `[` $ids `]` `,` $gradients attr-dict `:` type($ids) `,` type($gradients)
  }];
}

def HPS_DensePushOp : HPS_Op<"dense_push", [HPS_PlacedOpInterface]> {
  let summary = "Pushes the gradient of a dense parameter to the parameter server";
  let description = [{
    Emitted by autodiff for every trainable `hps.weight` (marked
    `hps.trainable`): `gradient` has the weight's type and is the gradient of
    the micro-batch's mean loss. The runtime sums a step's micro-batches, and
    the server applies the optimizer the module's `hps.training` names.
  }];
  let arguments = (ins StrAttr:$parameter, AnyTensor:$gradient,
                       OptionalAttr<HPS_DeviceAttr>:$device);
  let assemblyFormat = [{
    $parameter `,` $gradient attr-dict `:` type($gradient)
  }];
}

#endif // HETERPS_DIALECT_HPS_IR_HPSPIPELINEOPS_TD
