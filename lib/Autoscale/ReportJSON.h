//===- ReportJSON.h - What the simulators' JSON reports share ---*- C++ -*-===//
//
// The trace simulator and the priced workload print their results as JSON
// with the same conventions; both write them through these.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_AUTOSCALE_REPORTJSON_H
#define HETERPS_LIB_AUTOSCALE_REPORTJSON_H

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace heterps::autoscale::detail {

/// `key: x` with `decimals` fixed decimals (json::OStream prints doubles
/// with 17 digits).
inline void writeFixed(llvm::json::OStream &out, llvm::StringRef key, double x,
                       int decimals) {
  out.attributeBegin(key);
  out.rawValue(llvm::formatv("{0}", llvm::format("%.*f", decimals, x)).str());
  out.attributeEnd();
}

/// The mean and 99th percentile job completion times, null when no job
/// finished: a 0 would read as the best result.
inline void writeCompletionTimes(llvm::json::OStream &out, int completed,
                                 double mean, double p99) {
  if (completed == 0) {
    out.attribute("mean_jct_s", nullptr);
    out.attribute("p99_jct_s", nullptr);
    return;
  }
  writeFixed(out, "mean_jct_s", mean, 1);
  writeFixed(out, "p99_jct_s", p99, 1);
}

} // namespace heterps::autoscale::detail

#endif // HETERPS_LIB_AUTOSCALE_REPORTJSON_H
