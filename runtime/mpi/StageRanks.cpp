//===- StageRanks.cpp - Stages as ranks of an MPI job ---------------------===//
//
// The worker talks to its stage ranks on the job's pipeline communicator:
// one request at a time per stage rank, each answered with tag kStageReply,
// a status byte and the result or the stage rank's error. Micro-batches go
// to the rank of the stage replica the executor chose; step control goes
// to every stage rank at once. A stage rank runs its stage on the thread
// that serves requests, so its MPI calls (requests and its stage's
// parameter-server traffic) never overlap.
//
//===----------------------------------------------------------------------===//

#include "Comms.h"
#include "Protocol.h"

#include "heterps/Runtime/AlignedBuffer.h"
#include "heterps/Runtime/TrainingServer.h"

#include <optional>

namespace heterps::rt::mpi {
namespace {

/// Request tags on the pipeline communicator.
enum StageOp : int {
  kStageStart = 1,      // u64 seed, f32 init scale, i32 threads, u8 gpu-on-cpu
  kStageRun = 2,        // i64 micro-batch, u8[] per input -> u8[] per output
  kStageFinishStep = 3, // i64 micro-batches
  kStageEvalMode = 4,   // u8
  kStageDiscard = 5,    // ()
  kStageGoodbye = 6,    // () -> answered, then the rank leaves
  kStageReply = 100,
};

const char *stageOpName(int op) {
  switch (op) {
  case kStageStart:
    return "start";
  case kStageRun:
    return "run";
  case kStageFinishStep:
    return "finish-step";
  case kStageEvalMode:
    return "eval-mode";
  case kStageDiscard:
    return "discard";
  case kStageGoodbye:
    return "goodbye";
  default:
    return "unknown";
  }
}

/// Channel buffers of one stage, 64-byte aligned like the executor's.
class ChannelBuffers {
public:
  void allocate(const Bundle &bundle, const std::vector<int> &channels) {
    for (int channel : channels) {
      sizes.push_back(bundle.channels()[channel].bytes());
      memory.emplace_back(sizes.back());
      pointers.push_back(memory.back().data());
    }
  }
  std::vector<size_t> sizes;
  std::vector<void *> pointers;

private:
  std::vector<AlignedBuffer> memory;
};

class StageRank {
public:
  StageRank(MpiJob &job, const Bundle &bundle)
      : job(job), bundle(bundle), comm(job.comms().pipeline),
        worker(job.workerRank(0)), client(job) {
    // A job with the wrong number of stage ranks is the worker's to report
    // (MpiStageRanks::start), once; a rank without a slot never starts.
    std::vector<StageSlot> slots = stageSlots(bundle);
    if (job.index() < static_cast<int>(slots.size()))
      slot = slots[job.index()];
  }

  void serve() {
    for (bool leave = false; !leave;) {
      MPI_Status status;
      probe(worker, MPI_ANY_TAG, comm, &status);
      std::vector<char> message = receive(status, comm);
      MessageWriter out;
      out.put<uint8_t>(0);
      try {
        leave = handle(status.MPI_TAG, message, out);
      } catch (const std::exception &error) {
        out = MessageWriter();
        out.put<uint8_t>(1);
        out.putString(where() + ": " + error.what());
      }
      // The worker waits for this answer, so a blocking send cannot stall.
      std::vector<char> &bytes = out.bytes();
      checkMpi(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE,
                        worker, kStageReply, comm),
               "send");
    }
  }

private:
  std::string where() const {
    if (!slot)
      return "stage rank " + std::to_string(job.index());
    return "stage rank " + std::to_string(job.index()) + " (" +
           bundle.stages()[slot->stage].name + " replica " +
           std::to_string(slot->replica) + ", rank " +
           std::to_string(job.worldRank()) + ")";
  }

  bool handle(int op, const std::vector<char> &message, MessageWriter &out) {
    MessageReader in(message,
                     std::string(stageOpName(op)) + " request to " + where());
    if (op != kStageStart && op != kStageGoodbye && !program)
      throw Error(std::string(stageOpName(op)) + " before start");
    switch (op) {
    case kStageStart: {
      if (!slot)
        throw Error("the bundle has fewer stage replicas than the job has "
                    "stage ranks");
      train::TrainingServerOptions serverOptions;
      serverOptions.seed = in.get<uint64_t>();
      serverOptions.initScale = in.get<float>();
      serverOptions.store = &client;
      ExecutorOptions executorOptions;
      // The worker's --threads, else this rank's share of its machine.
      executorOptions.threadsPerStage = in.get<int32_t>();
      if (executorOptions.threadsPerStage <= 0)
        executorOptions.threadsPerStage = job.kernelThreads();
      executorOptions.gpuStagesOnCpu = in.get<uint8_t>() != 0;
      // This rank runs one stage: after each step it re-reads only the
      // dense parameters that stage looked up when it was created.
      serverOptions.refreshOnlyLookedUp = true;
      server = std::make_unique<train::TrainingServer>(bundle, serverOptions);
      executorOptions.server = server->stageServer();
      program = std::make_unique<StageProgram>(bundle, slot->stage,
                                               executorOptions, 1);
      // The worker may have loaded a checkpoint: the store is the truth.
      server->refreshDense();
      const StageSpec &stage = bundle.stages()[slot->stage];
      inputs.allocate(bundle, stage.inputs);
      outputs.allocate(bundle, stage.outputs);
      return false;
    }
    case kStageRun: {
      const int64_t microBatch = in.get<int64_t>();
      for (size_t i = 0; i < inputs.sizes.size(); ++i)
        in.getArrayInto(static_cast<char *>(inputs.pointers[i]),
                        inputs.sizes[i]);
      std::string error =
          program->run(0, microBatch,
                       const_cast<const void *const *>(inputs.pointers.data()),
                       outputs.pointers.data());
      if (!error.empty())
        throw Error(error);
      for (size_t o = 0; o < outputs.sizes.size(); ++o)
        out.putArray(static_cast<const char *>(outputs.pointers[o]),
                     outputs.sizes[o]);
      return false;
    }
    case kStageFinishStep:
      server->finishStep(in.get<int64_t>());
      return false;
    case kStageEvalMode:
      server->setEvalMode(in.get<uint8_t>() != 0);
      return false;
    case kStageDiscard:
      server->discardStep();
      return false;
    case kStageGoodbye:
      client.goodbye();
      return true;
    default:
      throw Error("unknown request tag " + std::to_string(op));
    }
  }

  MpiJob &job;
  const Bundle &bundle;
  MPI_Comm comm;
  int worker;
  std::optional<StageSlot> slot;
  MpiParameterClient client;
  std::unique_ptr<train::TrainingServer> server;
  std::unique_ptr<StageProgram> program;
  ChannelBuffers inputs, outputs;
};

} // namespace

std::vector<StageSlot> stageSlots(const Bundle &bundle) {
  std::vector<StageSlot> slots;
  for (size_t s = 0; s < bundle.stages().size(); ++s)
    for (int r = 0; r < bundle.stages()[s].replicas; ++r)
      slots.push_back({static_cast<int>(s), r});
  return slots;
}

void runStageRank(MpiJob &job, const Bundle &bundle) {
  if (job.role() != Role::Stage)
    throw Error("runStageRank needs a stage rank");
  StageRank(job, bundle).serve();
}

//===----------------------------------------------------------------------===//
// MpiStageRanks (the worker's side)
//===----------------------------------------------------------------------===//

struct MpiStageRanks::Control {
  int op = 0;
  std::vector<char> payload;
  std::vector<MPI_Request> sends;
};

MpiStageRanks::MpiStageRanks(MpiJob &job)
    : job(job), control(std::make_unique<Control>()) {}

MpiStageRanks::~MpiStageRanks() = default;

void MpiStageRanks::sendToAll(int op, const std::vector<char> &payload) {
  if (!control->sends.empty())
    throw Error("stage ranks: a " + std::string(stageOpName(op)) +
                " request while " + stageOpName(control->op) +
                " is unanswered");
  control->op = op;
  control->payload = payload;
  std::lock_guard<std::mutex> lock(job.mutex());
  control->sends.assign(job.stages(), MPI_REQUEST_NULL);
  for (int i = 0; i < job.stages(); ++i)
    checkMpi(MPI_Isend(control->payload.data(),
                       static_cast<int>(control->payload.size()), MPI_BYTE,
                       job.stageRank(i), op, job.comms().pipeline,
                       &control->sends[i]),
             "isend");
}

void MpiStageRanks::receiveFromAll(int op) {
  // Every answer is received even after an error, so the ranks stay in step.
  std::string failure;
  for (int i = 0; i < job.stages(); ++i) {
    MPI_Status status;
    probe(job.stageRank(i), kStageReply, job.comms().pipeline, &status,
          &job.mutex());
    std::vector<char> reply;
    {
      std::lock_guard<std::mutex> lock(job.mutex());
      reply = receive(status, job.comms().pipeline);
    }
    MessageReader in(reply, std::string(stageOpName(op)) +
                                " reply of stage rank " + std::to_string(i));
    if (in.get<uint8_t>() != 0 && failure.empty())
      failure = in.getString();
  }
  for (MPI_Request &send : control->sends)
    wait(&send, "isend", &job.mutex());
  control->sends.clear();
  if (!failure.empty())
    throw Error(failure);
}

void MpiStageRanks::start(const Bundle &bundle, const Settings &settings) {
  this->bundle = &bundle;
  std::vector<StageSlot> slots = stageSlots(bundle);
  if (static_cast<int>(slots.size()) != job.stages())
    throw Error("the bundle's stages have " + std::to_string(slots.size()) +
                " replicas in all and the job " + std::to_string(job.stages()) +
                " stage ranks; start one stage rank per replica (heterps "
                "launch --stage-ranks does)");
  ranks.assign(bundle.stages().size(), {});
  rankLocks.clear();
  rankLocks.resize(bundle.stages().size());
  for (size_t i = 0; i < slots.size(); ++i) {
    ranks[slots[i].stage].push_back(job.stageRank(static_cast<int>(i)));
    rankLocks[slots[i].stage].push_back(std::make_unique<std::mutex>());
  }
  MessageWriter out;
  out.put<uint64_t>(settings.seed);
  out.put<float>(settings.initScale);
  out.put<int32_t>(settings.threads);
  out.put<uint8_t>(settings.gpuStagesOnCpu ? 1 : 0);
  sendToAll(kStageStart, out.bytes());
  receiveFromAll(kStageStart);
}

std::string MpiStageRanks::run(int stage, int replica, int64_t microBatch,
                               const void *const *inputs,
                               void *const *outputs) {
  try {
    const StageSpec &spec = bundle->stages().at(stage);
    // Micro-batch m goes to replica m % R whichever executor thread asks:
    // each stage rank sums its own micro-batches' gradients before the
    // shards add the ranks' sums, so a fixed assignment keeps runs (and a
    // resumed run) bit-identical. One exchange at a time per rank.
    (void)replica;
    const size_t slot = size_t(microBatch) % ranks.at(stage).size();
    const int rank = ranks[stage][slot];
    std::lock_guard<std::mutex> exclusive(*rankLocks[stage][slot]);
    MessageWriter message;
    message.put<int64_t>(microBatch);
    for (size_t i = 0; i < spec.inputs.size(); ++i)
      message.putArray(static_cast<const char *>(inputs[i]),
                       bundle->channels()[spec.inputs[i]].bytes());
    MPI_Comm comm = job.comms().pipeline;
    std::vector<char> &bytes = message.bytes();
    MPI_Request send;
    {
      std::lock_guard<std::mutex> lock(job.mutex());
      checkMpi(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE,
                         rank, kStageRun, comm, &send),
               "isend");
    }
    MPI_Status status;
    probe(rank, kStageReply, comm, &status, &job.mutex());
    std::vector<char> reply;
    {
      std::lock_guard<std::mutex> lock(job.mutex());
      reply = receive(status, comm);
    }
    wait(&send, "isend", &job.mutex());
    MessageReader in(reply, "run reply of " + spec.name + " replica " +
                                std::to_string(replica));
    if (in.get<uint8_t>() != 0)
      return in.getString();
    for (size_t o = 0; o < spec.outputs.size(); ++o)
      in.getArrayInto(static_cast<char *>(outputs[o]),
                      bundle->channels()[spec.outputs[o]].bytes());
    return "";
  } catch (const std::exception &error) {
    return error.what();
  }
}

void MpiStageRanks::beginFinishStep(int64_t microBatches) {
  MessageWriter out;
  out.put<int64_t>(microBatches);
  sendToAll(kStageFinishStep, out.bytes());
}

void MpiStageRanks::endFinishStep() { receiveFromAll(kStageFinishStep); }

void MpiStageRanks::setEvalMode(bool eval) {
  MessageWriter out;
  out.put<uint8_t>(eval ? 1 : 0);
  sendToAll(kStageEvalMode, out.bytes());
  receiveFromAll(kStageEvalMode);
}

void MpiStageRanks::discardStep() {
  sendToAll(kStageDiscard, {});
  receiveFromAll(kStageDiscard);
}

void MpiStageRanks::goodbye() {
  sendToAll(kStageGoodbye, {});
  receiveFromAll(kStageGoodbye);
}

} // namespace heterps::rt::mpi
