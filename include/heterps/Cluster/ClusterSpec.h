//===- ClusterSpec.h - Device classes and links of a cluster ----*- C++ -*-===//
//
// The cluster description read from a YAML file (docs/ClusterFormat.md): the
// device classes that can run a stage and the links between them. Plain C++,
// no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_CLUSTER_CLUSTERSPEC_H
#define HETERPS_CLUSTER_CLUSTERSPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace heterps {
namespace cluster {

enum class DeviceKind { CPU, GPU };

llvm::StringRef toString(DeviceKind kind);

/// One kind of interchangeable device, e.g. "gpu.v100". A stage placed on a
/// class runs data parallel on `count` or fewer devices of that class.
struct DeviceClass {
  std::string name;
  DeviceKind kind = DeviceKind::CPU;
  double peakGflops = 0;          ///< Peak fp32 GFLOP/s of one device.
  double memoryBandwidthGBps = 0; ///< Memory bandwidth of one device, GB/s.
  double memoryGiB = 0;           ///< Memory of one device, GiB.
  double pricePerHour = 0;        ///< USD per device-hour.
  unsigned count = 0;             ///< Devices available in the cluster.
  unsigned perMachine = 1;        ///< Devices that share one machine.
  double launchOverheadUs = 0;    ///< Fixed cost per layer and pass.
};

enum class LinkScope { Intra, Inter };

llvm::StringRef toString(LinkScope scope);

/// Alpha-beta link parameters: a message of B bytes takes
/// latency + B / bandwidth.
struct LinkParams {
  double bandwidthGBps = 0;
  double latencyUs = 0;
  /// Links to the parameter server only: the server's time per key pulled
  /// or pushed (row lookup, or merge and optimizer update), which for small
  /// rows far exceeds the bytes' transfer time.
  double keyUs = 0;

  /// Seconds to move `bytes` in one message.
  double transferSeconds(double bytes) const {
    return latencyUs * 1e-6 + bytes / (bandwidthGBps * 1e9);
  }
};

/// The most devices a class may count (a cluster file's `count`).
inline constexpr unsigned kMostDevicesPerClass = 10000;
/// The highest price_per_hour a class may have (USD per device-hour).
inline constexpr double kMostPricePerHour = 1e6;

/// The endpoint name that stands for the parameter server in links.
inline constexpr llvm::StringLiteral kParameterServerEndpoint = "ps";

/// A link between two device classes (or a class and the parameter server,
/// then `toPS` is set and `to` is unused). Links are symmetric.
struct Link {
  unsigned from = 0;
  unsigned to = 0;
  bool toPS = false;
  LinkScope scope = LinkScope::Inter;
  LinkParams params;
};

struct ClusterSpec {
  std::string name;
  std::vector<DeviceClass> classes;
  std::vector<Link> links;
  /// Any two machines without a more specific link.
  LinkParams network;
  /// Workers to the parameter server, unless a class has its own `ps` link.
  LinkParams parameterServer;

  std::optional<unsigned> findClass(llvm::StringRef className) const;

  /// The link that carries tensors between a stage on class `from` and the
  /// next stage on class `to`: an intra-machine link between the two classes
  /// when declared (the stages are co-located), else an inter-machine link
  /// between them, else the default network.
  LinkParams stageLink(unsigned from, unsigned to) const;

  /// The link used by the all-reduce among `replicas` devices of one class:
  /// the class's intra link while the replicas fit in one machine, else its
  /// inter link, else the default network.
  LinkParams collectiveLink(unsigned cls, unsigned replicas) const;

  /// The link between a device of `cls` and the parameter server.
  LinkParams parameterServerLink(unsigned cls) const;

private:
  const Link *findLink(unsigned a, unsigned b, bool toPS,
                       LinkScope scope) const;
};

/// Parses a cluster description. `bufferName` names the text in errors. A
/// malformed or inconsistent description gives one error of the form
/// "<bufferName>:<line>:<column>: error: <problem>" followed by the line.
llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef yamlText,
                                             llvm::StringRef bufferName);

/// Reads and parses a cluster description file.
llvm::Expected<ClusterSpec> loadClusterSpec(llvm::StringRef path);

} // namespace cluster
} // namespace heterps

#endif // HETERPS_CLUSTER_CLUSTERSPEC_H
