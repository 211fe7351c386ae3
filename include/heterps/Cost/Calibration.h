//===- Calibration.h - Fit the cost model to a measured profile -*- C++ -*-===//
//
// The cost model's roofline assumes each device kind reaches a fraction of
// its peak on each kind of layer (CostOptions::efficiency). A short profile
// run (heterps-profile on one model, one device class) measures what those
// fractions really are on this machine: per layer kind, the roofline's time
// over the measured time of the same layers scales that kind's efficiencies.
// The calibrated options then price any graph, including ones never
// profiled (the autoscaler's priced CTR jobs, docs/Autoscaler.md).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_COST_CALIBRATION_H
#define HETERPS_COST_CALIBRATION_H

#include "heterps/Cost/CostModel.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace heterps::cost {

/// What calibration found for one layer kind.
struct KindCalibration {
  LayerKind kind = LayerKind::Elementwise;
  unsigned layers = 0; ///< Measured layers of this kind.
  double predictedSeconds = 0, measuredSeconds = 0;
  /// predicted / measured: how much faster than the roofline it ran.
  double factor = 1;
  bool clamped = false; ///< An efficiency would have passed 1.
};

struct Calibration {
  std::string deviceClass;
  cluster::DeviceKind deviceKind = cluster::DeviceKind::CPU;
  std::vector<KindCalibration> kinds;
  std::string describe() const;
};

/// Scales `options`' efficiencies of `deviceClass`'s device kind, per layer
/// kind, by roofline / measured time summed over the layers of `graph` that
/// `profiles` measured on that class; efficiencies stay within (0, 1].
/// Kinds with no measured layer keep theirs. Errors name the class when the
/// cluster lacks it or nothing of the graph was measured on it.
llvm::Expected<Calibration> calibrate(const LayerGraph &graph,
                                      const cluster::ClusterSpec &cluster,
                                      llvm::StringRef deviceClass,
                                      const ProfileDatabase &profiles,
                                      CostOptions &options);

/// The calibration file (docs/Planning.md): the class and kind it was
/// measured on, what it found per layer kind, and the resulting
/// efficiencies of that device kind.
std::string calibrationJson(const Calibration &calibration,
                            const CostOptions &options);

/// Reads a calibration file into `options` (the efficiencies of its device
/// kind); errors name the file and field.
llvm::Expected<Calibration> loadCalibration(llvm::StringRef path,
                                            CostOptions &options);

} // namespace heterps::cost

#endif // HETERPS_COST_CALIBRATION_H
