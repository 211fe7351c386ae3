//===- StaticBatch.h - Give a batch-1 model a batch dim ---------*- C++ -*-===//
//
// Private to the importer. Exporters often fix the batch at 1 (Keras,
// onnx-mlir, traced PyTorch). With --static-batch the importer treats a
// static leading 1 of the graph inputs as the batch: it binds it to --batch
// and rewrites the two ways graphs hard-code it that are exact at batch 1
// (a Reshape to a constant shape starting with 1 copies dim 0 instead; a
// Flatten at axis 0 flattens at axis 1), then checks after shape inference
// that every tensor that carried the batch carries --batch, naming the node
// that still hard-codes 1 otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_IMPORT_STATICBATCH_H
#define HETERPS_LIB_IMPORT_STATICBATCH_H

#include "heterps/Import/ONNXModelLoader.h"

#include <functional>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace heterps::import {

/// Values that carry the batch, found at batch 1 and checked after the
/// rewritten graph's shape inference.
struct StaticBatchCarriers {
  std::vector<std::string> values;
};

/// Rewrites `model` (checked and sorted, not yet inferred) for `batch`;
/// `infer` runs checker and shape inference on a copy for the batch-1
/// shapes. Marks the batched inputs and outputs in `result` and returns ""
/// (carriers stay empty where no input has a static leading 1), or returns
/// an error message.
std::string
prepareStaticBatch(onnx::ModelProto &model, int64_t batch,
                   const std::function<std::string(onnx::ModelProto &)> &infer,
                   LoadedModel &result, StaticBatchCarriers &carriers);

/// After shape inference of the rewritten model: every carrier has `batch`
/// in dim 0, or the error names the node that produced it.
std::string verifyStaticBatch(const onnx::ModelProto &model, int64_t batch,
                              const StaticBatchCarriers &carriers);

} // namespace heterps::import

#endif // HETERPS_LIB_IMPORT_STATICBATCH_H
