//===- Comms.h - The communicators of an MpiJob (private) -------*- C++ -*-===//

#ifndef HETERPS_RUNTIME_MPI_COMMS_H
#define HETERPS_RUNTIME_MPI_COMMS_H

#include "heterps/Runtime/MpiTraining.h"

#include <mpi.h>

namespace heterps::rt::mpi {

struct MpiJob::Comms {
  /// Worker <-> shard requests and replies: a duplicate of MPI_COMM_WORLD,
  /// so they never match a message of anything else in the process.
  MPI_Comm ps = MPI_COMM_NULL;
  /// The ranks of this process's role (workers: broadcast, gather, stop
  /// agreement; rank 0 of it is worker 0, the leader).
  MPI_Comm role = MPI_COMM_NULL;
};

/// Throws Error naming `what` unless an MPI call returned MPI_SUCCESS (with
/// the default error handler MPI aborts first; this covers handlers that
/// return).
void checkMpi(int result, const char *what);

// Waiting without holding a core. Open MPI's blocking calls poll in a busy
// loop; ranks that share cores (several per machine, or beside their own
// stage threads) then take turns a scheduler time slice apart, which made
// a 2-worker job on 2 cores 10x slower than one worker. These poll for a
// few microseconds, then sleep in growing pauses of up to half a
// millisecond.

/// MPI_Probe without the busy loop.
void probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
/// MPI_Wait without the busy loop; `what` names the operation in errors.
void wait(MPI_Request *request, const char *what);

} // namespace heterps::rt::mpi

#endif // HETERPS_RUNTIME_MPI_COMMS_H
