//===- MpiJob.cpp - MPI start-up, roles, communicators --------------------===//

#include "Comms.h"

#include <cstdio>
#include <cstdlib>

namespace heterps::rt::mpi {

void checkMpi(int result, const char *what) {
  if (result == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  throw Error(std::string("MPI ") + what +
              " failed: " + std::string(text, length));
}

MpiJob::MpiJob(int *argc, char ***argv, Role role)
    : role_(role), comms_(std::make_unique<Comms>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    throw Error("MPI is already initialised in this process");
  int provided = 0;
  checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided),
           "init");
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("the MPI library gives thread level " +
                std::to_string(provided) +
                ", below MPI_THREAD_SERIALIZED (stage threads of a worker "
                "pull and push one at a time from several threads)");
  int size = 0;
  checkMpi(MPI_Comm_rank(MPI_COMM_WORLD, &worldRank_), "comm rank");
  checkMpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "comm size");
  // Roles come from the commands the ranks run, in any rank order.
  int mine = static_cast<int>(role);
  std::vector<int> roles(size);
  checkMpi(MPI_Allgather(&mine, 1, MPI_INT, roles.data(), 1, MPI_INT,
                         MPI_COMM_WORLD),
           "allgather of roles");
  for (int rank = 0; rank < size; ++rank) {
    if (roles[rank] == static_cast<int>(Role::Shard)) {
      if (rank == worldRank_)
        index_ = static_cast<int>(shardRanks.size());
      shardRanks.push_back(rank);
    } else {
      if (rank == worldRank_)
        index_ = static_cast<int>(workerRanks.size());
      workerRanks.push_back(rank);
    }
  }
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &comms_->ps), "comm dup");
  checkMpi(MPI_Comm_split(MPI_COMM_WORLD, mine, worldRank_, &comms_->role),
           "comm split");
  if (shardRanks.empty())
    throw Error("the MPI job has " + std::to_string(size) +
                " ranks and none is a parameter-server shard; start shards "
                "with `heterps ps-shard BUNDLE` (heterps launch does)");
  if (workerRanks.empty())
    throw Error("the MPI job has " + std::to_string(size) +
                " ranks and none is a worker; start workers with `heterps "
                "run BUNDLE --train ... --mpi-worker` (heterps launch does)");
}

MpiJob::~MpiJob() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  if (comms_->role != MPI_COMM_NULL)
    MPI_Comm_free(&comms_->role);
  if (comms_->ps != MPI_COMM_NULL)
    MPI_Comm_free(&comms_->ps);
  MPI_Finalize();
}

int MpiJob::workerOf(int rank) const {
  for (size_t w = 0; w < workerRanks.size(); ++w)
    if (workerRanks[w] == rank)
      return static_cast<int>(w);
  return -1;
}

bool MpiJob::running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void MpiJob::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (running())
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // namespace heterps::rt::mpi
