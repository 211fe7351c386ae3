//===- HostShare.cpp - How the ranks on one machine share its cores -------===//

#include "heterps/Runtime/MpiTraining.h"

#include <algorithm>

namespace heterps::rt::mpi {

HostShare shareHost(int cores, int computeRanks, int shardRanks) {
  cores = std::max(cores, 1);
  computeRanks = std::max(computeRanks, 0);
  shardRanks = std::max(shardRanks, 0);
  HostShare share;
  if (computeRanks == 0) {
    share.shardThreads = std::max(1, cores / std::max(shardRanks, 1));
    share.computeThreads = 1;
  } else {
    // Shards keep a core each only while every compute rank still gets one.
    const int reserved = cores - shardRanks >= computeRanks ? shardRanks : 0;
    share.computeThreads = std::max(1, (cores - reserved) / computeRanks);
    share.shardThreads = 1;
  }
  const int threads =
      computeRanks * share.computeThreads + shardRanks * share.shardThreads;
  share.spin = threads <= cores;
  return share;
}

} // namespace heterps::rt::mpi
