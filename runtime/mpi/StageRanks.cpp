//===- StageRanks.cpp - Stages as ranks of an MPI job ---------------------===//
//
// The worker talks to its stage ranks on the job's pipeline communicator:
// one request at a time per stage rank, each answered with tag kStageReply,
// a status byte and the result or the stage rank's error. Micro-batches go
// to the rank of the stage replica the executor chose; step control goes
// to every stage rank at once. A stage rank runs its stage on the thread
// that serves requests, so its MPI calls (requests, channels and its
// stage's parameter-server traffic) never overlap.
//
// Only the channels the worker produces (data) or consumes (loss,
// predictions) travel with requests and replies. A channel between two
// stages goes from the producing rank straight to the consuming one, so
// each value crosses the network once and the worker is no hub: the
// producer posts it before it answers the worker, and the worker asks the
// consumer to run only after every producer has answered.
//
//===----------------------------------------------------------------------===//

#include "Comms.h"
#include "Protocol.h"

#include "heterps/Runtime/AlignedBuffer.h"
#include "heterps/Runtime/TrainingServer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <list>
#include <optional>
#include <set>

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
  // A channel message between stage ranks: kChannelTag + micro-batch. One
  // per (producer rank, consumer rank, micro-batch), so within a step the
  // tag tells the consumer which of its micro-batches a message feeds.
  kChannelTag = 1000,
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

/// The channels stage `from` sends stage `to`, in `to`'s input order: what
/// one channel message between their ranks holds.
std::vector<int> linkChannels(const Bundle &bundle, int from, int to) {
  std::vector<int> channels;
  for (int channel : bundle.stages()[to].inputs)
    if (bundle.channels()[channel].from == from)
      channels.push_back(channel);
  return channels;
}

size_t positionIn(const std::vector<int> &channels, int channel) {
  return size_t(std::find(channels.begin(), channels.end(), channel) -
                channels.begin());
}

/// Who is at the other end of a stage's channels: positions in its inputs
/// that the worker sends and in its outputs that the worker receives, and
/// the stages whose ranks exchange the others with it directly.
struct ChannelEnds {
  std::vector<size_t> fromWorker, toWorker;
  std::set<int> producers, consumers;
};

ChannelEnds channelEnds(const Bundle &bundle, const StageSpec &stage) {
  ChannelEnds ends;
  // Position i of `channels` goes to `worker` where the channel's `end` is
  // the worker (-1), else that stage goes to `stages`.
  auto sortEnds = [&](const std::vector<int> &channels, int ChannelSpec::*end,
                      std::vector<size_t> &worker, std::set<int> &stages) {
    for (size_t i = 0; i < channels.size(); ++i) {
      const int other = bundle.channels()[channels[i]].*end;
      if (other < 0)
        worker.push_back(i);
      else
        stages.insert(other);
    }
  };
  sortEnds(stage.inputs, &ChannelSpec::from, ends.fromWorker, ends.producers);
  sortEnds(stage.outputs, &ChannelSpec::to, ends.toWorker, ends.consumers);
  return ends;
}

/// The tag of micro-batch `microBatch`'s channel messages.
int channelTag(int64_t microBatch) {
  static const int upper = [] {
    void *value = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
    return found ? *static_cast<int *>(value) : 32767; // MPI's least bound
  }();
  if (microBatch < 0 || microBatch > int64_t(upper) - kChannelTag)
    throw Error("micro-batch " + std::to_string(microBatch) +
                " of a step is past this MPI's tag bound " +
                std::to_string(upper) + "; run fewer micro-batches per step");
  return kChannelTag + static_cast<int>(microBatch);
}

/// World rank of every stage replica: the stage slots in order.
std::vector<std::vector<int>> replicaRanks(const MpiJob &job,
                                           const Bundle &bundle) {
  std::vector<std::vector<int>> ranks(bundle.stages().size());
  std::vector<StageSlot> slots = stageSlots(bundle);
  for (size_t i = 0; i < slots.size(); ++i)
    ranks[slots[i].stage].push_back(job.stageRank(static_cast<int>(i)));
  return ranks;
}

/// The rank that runs micro-batch `microBatch` of `stage`: replica m % R,
/// whichever executor thread asks. Each stage rank sums its own
/// micro-batches' gradients before the shards add the ranks' sums, so a
/// fixed assignment keeps runs (and a resumed run) bit-identical, and the
/// producers of a channel know its consumer's rank.
int rankFor(const std::vector<std::vector<int>> &ranks, int stage,
            int64_t microBatch) {
  const std::vector<int> &replicas = ranks.at(stage);
  return replicas[size_t(microBatch) % replicas.size()];
}

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

  ~StageRank() {
    for (InputLink &link : inputLinks)
      if (link.type != MPI_DATATYPE_NULL)
        MPI_Type_free(&link.type);
  }
  StageRank(const StageRank &) = delete;
  StageRank &operator=(const StageRank &) = delete;

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
      linkChannelsOf(stage);
      return false;
    }
    case kStageRun: {
      const int64_t microBatch = in.get<int64_t>();
      for (size_t i : inputsFromWorker)
        in.getArrayInto(static_cast<char *>(inputs.pointers[i]),
                        inputs.sizes[i]);
      receiveLinks(microBatch);
      std::string error =
          program->run(0, microBatch,
                       const_cast<const void *const *>(inputs.pointers.data()),
                       outputs.pointers.data());
      if (!error.empty())
        throw Error(error);
      // Posted before the worker hears that this micro-batch is done, so
      // the consumers' receives below always find their message.
      sendLinks(microBatch);
      for (size_t o : outputsToWorker)
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
      // Every consumer has run by now: the sends all complete.
      for (PendingSend &send : pendingSends)
        wait(&send.request, "channel send");
      pendingSends.clear();
      client.goodbye();
      return true;
    default:
      throw Error("unknown request tag " + std::to_string(op));
    }
  }

  /// Sorts the stage's channels by who is at their other end: the worker,
  /// or a stage whose ranks exchange them with this one directly.
  void linkChannelsOf(const StageSpec &stage) {
    ranks = replicaRanks(job, bundle);
    ChannelEnds ends = channelEnds(bundle, stage);
    inputsFromWorker = std::move(ends.fromWorker);
    outputsToWorker = std::move(ends.toWorker);
    for (int producer : ends.producers) {
      // Received in place: a datatype scattering the message over the
      // stage's input buffers, which live as long as this rank.
      InputLink link;
      link.stage = producer;
      std::vector<int> lengths;
      std::vector<MPI_Aint> addresses;
      for (int channel : linkChannels(bundle, producer, slot->stage)) {
        const size_t i = positionIn(stage.inputs, channel);
        if (inputs.sizes[i] > size_t(std::numeric_limits<int>::max()))
          throw Error("channel '" + bundle.channels()[channel].name +
                      "' is over 2 GiB, more than one MPI message carries");
        lengths.push_back(static_cast<int>(inputs.sizes[i]));
        addresses.emplace_back();
        checkMpi(MPI_Get_address(inputs.pointers[i], &addresses.back()),
                 "get address");
        link.bytes += inputs.sizes[i];
      }
      checkMpi(MPI_Type_create_hindexed(static_cast<int>(lengths.size()),
                                        lengths.data(), addresses.data(),
                                        MPI_BYTE, &link.type),
               "type create");
      checkMpi(MPI_Type_commit(&link.type), "type commit");
      inputLinks.push_back(link);
    }
    for (int consumer : ends.consumers) {
      OutputLink link;
      link.stage = consumer;
      for (int channel : linkChannels(bundle, slot->stage, consumer)) {
        link.positions.push_back(positionIn(stage.outputs, channel));
        link.bytes += outputs.sizes[link.positions.back()];
      }
      if (link.bytes > size_t(std::numeric_limits<int>::max()))
        throw Error("the channels from " + bundle.stages()[slot->stage].name +
                    " to " + bundle.stages()[consumer].name +
                    " are over 2 GiB, more than one MPI message carries");
      outputLinks.push_back(link);
    }
  }

  /// Receives this micro-batch's channels from the producing stages' ranks.
  void receiveLinks(int64_t microBatch) {
    if (inputLinks.empty())
      return;
    const int tag = channelTag(microBatch);
    std::vector<MPI_Request> requests(inputLinks.size(), MPI_REQUEST_NULL);
    for (size_t l = 0; l < inputLinks.size(); ++l)
      checkMpi(MPI_Irecv(MPI_BOTTOM, 1, inputLinks[l].type,
                         rankFor(ranks, inputLinks[l].stage, microBatch), tag,
                         comm, &requests[l]),
               "channel receive");
    for (size_t l = 0; l < inputLinks.size(); ++l) {
      MPI_Status status;
      wait(&requests[l], "channel receive", nullptr, &status);
      int bytes = 0;
      checkMpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "get count");
      if (size_t(bytes) != inputLinks[l].bytes)
        throw Error("micro-batch " + std::to_string(microBatch) + " from " +
                    bundle.stages()[inputLinks[l].stage].name + " brought " +
                    std::to_string(bytes) + " bytes, not the " +
                    std::to_string(inputLinks[l].bytes) + " of its channels");
    }
  }

  /// Sends this micro-batch's channels to the consuming stages' ranks.
  /// Copies: the next run reuses the output buffers while sends are on
  /// their way.
  void sendLinks(int64_t microBatch) {
    pendingSends.remove_if([](PendingSend &send) {
      int done = 0;
      checkMpi(MPI_Test(&send.request, &done, MPI_STATUS_IGNORE),
               "channel send");
      return done != 0;
    });
    if (outputLinks.empty())
      return;
    const int tag = channelTag(microBatch);
    for (const OutputLink &link : outputLinks) {
      PendingSend &send = pendingSends.emplace_back();
      send.bytes.resize(link.bytes);
      char *cursor = send.bytes.data();
      for (size_t o : link.positions) {
        std::memcpy(cursor, outputs.pointers[o], outputs.sizes[o]);
        cursor += outputs.sizes[o];
      }
      // Completed by sendLinks' MPI_Test or at goodbye, out of the MPI
      // checker's sight.
      // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
      checkMpi(MPI_Isend(send.bytes.data(), static_cast<int>(link.bytes),
                         MPI_BYTE, rankFor(ranks, link.stage, microBatch), tag,
                         comm, &send.request),
               "channel send");
    }
  }

  /// The channels from one producing stage: a message per micro-batch.
  struct InputLink {
    int stage = 0;
    size_t bytes = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
  };
  /// The channels to one consuming stage, positions in the stage's outputs.
  struct OutputLink {
    int stage = 0;
    std::vector<size_t> positions;
    size_t bytes = 0;
  };
  struct PendingSend {
    std::vector<char> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  MpiJob &job;
  const Bundle &bundle;
  MPI_Comm comm;
  int worker;
  std::optional<StageSlot> slot;
  MpiParameterClient client;
  std::unique_ptr<train::TrainingServer> server;
  std::unique_ptr<StageProgram> program;
  ChannelBuffers inputs, outputs;
  std::vector<std::vector<int>> ranks;                   // replicaRanks
  std::vector<size_t> inputsFromWorker, outputsToWorker; // positions
  std::vector<InputLink> inputLinks;
  std::vector<OutputLink> outputLinks;
  std::list<PendingSend> pendingSends;
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
  ranks = replicaRanks(job, bundle);
  rankLocks.clear();
  rankLocks.resize(ranks.size());
  fromWorker.assign(ranks.size(), {});
  toWorker.assign(ranks.size(), {});
  for (size_t s = 0; s < ranks.size(); ++s) {
    for (size_t r = 0; r < ranks[s].size(); ++r)
      rankLocks[s].push_back(std::make_unique<std::mutex>());
    ChannelEnds ends = channelEnds(bundle, bundle.stages()[s]);
    fromWorker[s] = std::move(ends.fromWorker);
    toWorker[s] = std::move(ends.toWorker);
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
    // The rank is rankFor's, not the executor's `replica`. One exchange at a
    // time per rank.
    (void)replica;
    const size_t slot = size_t(microBatch) % ranks.at(stage).size();
    const int rank = ranks[stage][slot];
    std::lock_guard<std::mutex> exclusive(*rankLocks[stage][slot]);
    // Only the worker's own channels: the stage ranks exchange the others.
    MessageWriter message;
    message.put<int64_t>(microBatch);
    for (size_t i : fromWorker[stage])
      message.putArray(static_cast<const char *>(inputs[i]),
                       bundle->channels()[spec.inputs[i]].bytes());
    MPI_Comm comm = job.comms().pipeline;
    std::vector<char> &bytes = message.bytes();
    // The MPI checker does not see through wait(), which completes `send`.
    // NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
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
    // NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)
    if (in.get<uint8_t>() != 0)
      return in.getString();
    for (size_t o : toWorker[stage])
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
