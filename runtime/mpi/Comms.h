//===- Comms.h - The communicators of an MpiJob (private) -------*- C++ -*-===//

#ifndef HETERPS_RUNTIME_MPI_COMMS_H
#define HETERPS_RUNTIME_MPI_COMMS_H

#include "heterps/Runtime/MpiTraining.h"

#include <mpi.h>

#include <mutex>
#include <vector>

namespace heterps::rt::mpi {

struct MpiJob::Comms {
  /// Worker <-> shard requests and replies: a duplicate of MPI_COMM_WORLD,
  /// so they never match a message of anything else in the process.
  MPI_Comm ps = MPI_COMM_NULL;
  /// The ranks of this process's role (workers: broadcast, gather, stop
  /// agreement; rank 0 of it is worker 0, the leader).
  MPI_Comm role = MPI_COMM_NULL;
  /// Worker <-> stage ranks: micro-batches and step control; stage rank ->
  /// stage rank: the channels between their stages.
  MPI_Comm pipeline = MPI_COMM_NULL;
};

/// Throws Error naming `what` unless an MPI call returned MPI_SUCCESS (with
/// the default error handler MPI aborts first; this covers handlers that
/// return).
void checkMpi(int result, const char *what);

// Waiting without holding a core. Open MPI's blocking calls poll in a busy
// loop; ranks that share cores (several per machine, or beside their own
// stage threads) then take turns a scheduler time slice apart, which made
// a 2-worker job on 2 cores 10x slower than one worker. Where the ranks on
// a machine have more threads than it has cores (MpiJob's HostShare, or
// HETERPS_MPI_WAIT=backoff) these poll for a few microseconds, yield for a
// few milliseconds, then sleep in growing pauses of up to 200 us; else
// (or HETERPS_MPI_WAIT=spin) they poll without pausing.

/// MPI_Probe without the busy loop. With `lock`, every poll holds it and
/// the pauses do not: other threads of the process make their MPI calls in
/// between (MPI_THREAD_SERIALIZED).
void probe(int source, int tag, MPI_Comm comm, MPI_Status *status,
           std::mutex *lock = nullptr);
/// Receives the message `status` (from a probe) announced.
std::vector<char> receive(const MPI_Status &status, MPI_Comm comm);
/// MPI_Wait without the busy loop; `what` names the operation in errors.
/// `status`, when given, receives the completed request's status.
void wait(MPI_Request *request, const char *what, std::mutex *lock = nullptr,
          MPI_Status *status = nullptr);

} // namespace heterps::rt::mpi

#endif // HETERPS_RUNTIME_MPI_COMMS_H
