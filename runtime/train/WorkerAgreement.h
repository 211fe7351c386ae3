//===- WorkerAgreement.h - Flags every worker of a group shares -*- C++ -*-===//
//
// Data-parallel workers started by hand (mpirun MPMD, srun --multi-prog)
// may be given different training flags. Some make the job hang (a worker
// with fewer --steps leaves while the others wait for its pushes, or skips
// a meeting of an asynchronous group); others train silently wrong (each
// worker hashing features into its own --hash-buckets). The workers
// compare these settings before their first collective and the job fails
// with one error naming the flag.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TRAIN_WORKERAGREEMENT_H
#define HETERPS_RUNTIME_TRAIN_WORKERAGREEMENT_H

#include <string>
#include <utility>
#include <vector>

namespace heterps::rt::train {

class WorkerGroup;

/// A setting the workers must share: its name (a flag, "bundle") and how
/// an error shows this worker's value ("--steps 20", "no --eval", "bundle
/// 8c1f..."); workers agree when every shown text is the same.
struct SharedSetting {
  std::string name, shown;
};

/// How a worker shows a data file it reads, for the others to compare: its
/// size and a CRC32 of its first and last MiB. Paths may differ between
/// machines, and node-local copies of one path may differ in content;
/// reading the whole file would cost as much as an epoch. Throws Error
/// naming `path` when it cannot be read.
std::string fileFingerprint(const std::string &path);

/// Compares this worker's `settings` with the leader's (a broadcast, so
/// every worker of `group` must call it at the same point, with the same
/// names in the same order). Throws Error naming the first that differs,
/// on each worker whose settings are not the leader's.
void checkWorkersAgree(WorkerGroup &group,
                       const std::vector<SharedSetting> &settings);

/// The settings as the leader sends them, and back; parse throws Error on
/// text that encodeSettings did not write.
std::string encodeSettings(const std::vector<SharedSetting> &settings);
std::vector<SharedSetting> decodeSettings(const std::string &text);

/// The first difference between the leader's settings and this worker's,
/// as an error message ("this worker was started with ..."); empty when
/// they agree.
std::string describeDisagreement(const std::vector<SharedSetting> &leader,
                                 const std::vector<SharedSetting> &mine);

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_TRAIN_WORKERAGREEMENT_H
