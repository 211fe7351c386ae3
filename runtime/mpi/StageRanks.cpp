//===- StageRanks.cpp - Stages as ranks of an MPI job ---------------------===//
//
// The worker controls its stage ranks on the job's pipeline communicator:
// one request at a time, sent to every stage rank and answered by each with
// tag kStageReply, a status byte and the result or the stage rank's error.
//
// A run request starts one executor call of n micro-batches; from there the
// stage ranks schedule themselves. Micro-batch m of a stage belongs to
// replica m % R, and each stage rank runs its micro-batches in order: it
// receives the micro-batch's channels from the ranks that produce them,
// runs its stage and sends its outputs to the ranks that consume them,
// then answers the run request once it has run all of its share. The
// worker is one more producer (the data) and consumer (the loss and
// predictions) in the same message scheme, not a hub: no stage waits for a
// round trip to the worker, and every value crosses the network once.
// Channels only go to later stages, so a rank never waits on one that
// waits on it. A stage rank runs its stage on the thread that serves
// requests, so its MPI calls (requests, channels and its stage's
// parameter-server traffic) never overlap.
//
//===----------------------------------------------------------------------===//

#include "Comms.h"
#include "Protocol.h"

#include "heterps/Runtime/AlignedBuffer.h"
#include "heterps/Runtime/FaultInjection.h"
#include "heterps/Runtime/Heartbeat.h"
#include "heterps/Runtime/TrainingServer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <set>

namespace heterps::rt::mpi {
namespace {

/// Request tags on the pipeline communicator.
enum StageOp : int {
  kStageStart = 1,      // u64 seed, f32 init scale, i32 threads, u8 gpu-on-cpu,
                        // i64 the step training continues after
  kStageRun = 2,        // i64 micro-batches -> () once this rank ran its share
  kStageFinishStep = 3, // i64 micro-batches
  kStageEvalMode = 4,   // u8
  kStageDiscard = 5,    // ()
  kStageGoodbye = 6,    // () -> answered, then the rank leaves
  kStageReply = 100,
  // A channel message: kChannelTag + micro-batch. One per (producer,
  // consumer, micro-batch) where the worker is a producer and a consumer
  // too, so within a call the tag tells which micro-batch a message feeds.
  // It holds a status byte (kChannelsFollow, or kProducerFailed and
  // nothing else) and then the channels.
  kChannelTag = 1000,
};

enum ChannelStatus : uint8_t { kChannelsFollow = 0, kProducerFailed = 1 };

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

/// Positions in a stage's inputs that the worker sends and in its outputs
/// that the worker receives, and the stages that consume its other outputs.
struct ChannelEnds {
  std::vector<size_t> fromWorker, toWorker;
  std::set<int> consumers;
};

ChannelEnds channelEnds(const Bundle &bundle, const StageSpec &stage) {
  ChannelEnds ends;
  for (size_t i = 0; i < stage.inputs.size(); ++i)
    if (bundle.channels()[stage.inputs[i]].from < 0)
      ends.fromWorker.push_back(i);
  for (size_t o = 0; o < stage.outputs.size(); ++o) {
    const int consumer = bundle.channels()[stage.outputs[o]].to;
    if (consumer < 0)
      ends.toWorker.push_back(o);
    else
      ends.consumers.insert(consumer);
  }
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

/// The rank that runs micro-batch `microBatch` of `stage`: replica m % R.
/// Each stage rank sums its own micro-batches' gradients before the shards
/// add the ranks' sums, so a fixed assignment keeps runs (and a resumed run)
/// bit-identical, and every producer of a channel knows its consumer's
/// rank. Stage -1 is the worker.
int rankFor(const std::vector<std::vector<int>> &ranks, int worker, int stage,
            int64_t microBatch) {
  if (stage < 0)
    return worker;
  const std::vector<int> &replicas = ranks.at(stage);
  return replicas[size_t(microBatch) % replicas.size()];
}

/// "stage NAME" or "the worker", for errors about a channel message.
std::string describeEnd(const Bundle &bundle, int stage) {
  return stage < 0 ? std::string("the worker")
                   : "stage " + bundle.stages()[stage].name;
}

/// Whether a received channel message of micro-batch `microBatch` from
/// `from` (`received` bytes, its status byte `status`) brings its channels
/// (`expected` bytes with the status) or says its producer failed; throws
/// Error for anything else.
bool channelsArrived(int received, uint8_t status, size_t expected,
                     int64_t microBatch, const std::string &from) {
  if (received >= 1 && status == kProducerFailed)
    return false;
  if (received < 1 || status != kChannelsFollow || size_t(received) != expected)
    throw Error("micro-batch " + std::to_string(microBatch) + " from " + from +
                " brought " + std::to_string(received) + " bytes, not the " +
                std::to_string(expected) + " of its status and channels");
  return true;
}

/// Copies out a channel message: the status byte, then the channels at
/// `positions` of `buffers`. A failed producer sends the status alone.
std::vector<char> packChannels(const std::vector<size_t> &positions,
                               const void *const *buffers,
                               const std::vector<size_t> &sizes, bool failed) {
  if (failed)
    return {static_cast<char>(kProducerFailed)};
  size_t bytes = 1;
  for (size_t p : positions)
    bytes += sizes[p];
  std::vector<char> message(bytes);
  message[0] = static_cast<char>(kChannelsFollow);
  char *cursor = message.data() + 1;
  for (size_t p : positions) {
    std::memcpy(cursor, buffers[p], sizes[p]);
    cursor += sizes[p];
  }
  return message;
}

/// Channel messages on their way. Each owns its bytes, so the channel
/// buffers they were copied from may be reused at once.
class PendingSends {
public:
  void send(std::vector<char> bytes, int rank, int tag, MPI_Comm comm,
            std::mutex *lock) {
    if (bytes.size() > size_t(std::numeric_limits<int>::max()))
      throw Error("a channel message of " + std::to_string(bytes.size()) +
                  " bytes is over 2 GiB, more than one MPI message carries");
    std::unique_lock<std::mutex> held;
    if (lock)
      held = std::unique_lock<std::mutex>(*lock);
    sends.remove_if([](Send &send) {
      int done = 0;
      checkMpi(MPI_Test(&send.request, &done, MPI_STATUS_IGNORE),
               "channel send");
      return done != 0;
    });
    Send &pending = sends.emplace_back();
    pending.bytes = std::move(bytes);
    // Completed by the MPI_Test above or by waitAll, out of the MPI
    // checker's sight.
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
    checkMpi(MPI_Isend(pending.bytes.data(),
                       static_cast<int>(pending.bytes.size()), MPI_BYTE, rank,
                       tag, comm, &pending.request),
             "channel send");
  }
  void waitAll(std::mutex *lock) {
    for (Send &send : sends)
      wait(&send.request, "channel send", lock);
    sends.clear();
  }

private:
  struct Send {
    std::vector<char> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Send> sends;
};

class StageRank {
public:
  StageRank(MpiJob &job, const Bundle &bundle)
      : job(job), bundle(bundle), comm(job.comms().pipeline),
        worker(job.workerRank(0)), client(job),
        heartbeat(
            train::RankRole::Stage, job.index(),
            train::HeartbeatOptions::fromEnvironment(train::RankRole::Stage)),
        faults(train::FaultInjector::fromEnvironment(train::RankRole::Stage,
                                                     job.index())) {
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
      finishedSteps = in.get<int64_t>();
      heartbeat.setStep(finishedSteps);
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
    case kStageRun:
      runShare(in.get<int64_t>());
      return false;
    case kStageFinishStep:
      server->finishStep(in.get<int64_t>());
      heartbeat.setStep(++finishedSteps);
      faults.stepFinished(finishedSteps, heartbeat);
      return false;
    case kStageEvalMode:
      server->setEvalMode(in.get<uint8_t>() != 0);
      return false;
    case kStageDiscard:
      server->discardStep();
      return false;
    case kStageGoodbye:
      // Every consumer has run by now: the sends all complete.
      pendingSends.waitAll(nullptr);
      client.goodbye();
      return true;
    default:
      throw Error("unknown request tag " + std::to_string(op));
    }
  }

  /// Runs this rank's micro-batches of a call of `count`, in order. A
  /// micro-batch whose producer failed, or that fails here, still sends
  /// every consumer its message (marked failed), so no rank waits forever;
  /// the first error made here is this rank's answer to the worker.
  void runShare(int64_t count) {
    const int64_t replicas = static_cast<int64_t>(ranks[slot->stage].size());
    std::string firstError;
    for (int64_t m = slot->replica; m < count; m += replicas) {
      bool failed = true;
      try {
        if (receiveLinks(m)) {
          std::string error = program->run(
              0, m, const_cast<const void *const *>(inputs.pointers.data()),
              outputs.pointers.data());
          if (!error.empty())
            throw Error(error);
          failed = false;
        }
      } catch (const std::exception &error) {
        if (firstError.empty())
          firstError = error.what();
      }
      sendLinks(m, failed);
    }
    if (!firstError.empty())
      throw Error(firstError);
  }

  /// Sorts the stage's channels by who is at their other end: the worker
  /// (-1) or another stage, whose ranks exchange them with this one.
  void linkChannelsOf(const StageSpec &stage) {
    ranks = replicaRanks(job, bundle);
    // Inputs, grouped by producer in this stage's input order, are received
    // in place: a datatype scattering the message (status byte, channels)
    // over the link's status and the stage's input buffers, which live as
    // long as this rank.
    std::map<int, std::vector<size_t>> producers;
    for (size_t i = 0; i < stage.inputs.size(); ++i)
      producers[bundle.channels()[stage.inputs[i]].from].push_back(i);
    for (auto &[producer, positions] : producers) {
      InputLink &link = inputLinks.emplace_back();
      link.stage = producer;
      link.status = std::make_unique<uint8_t>(kProducerFailed);
      std::vector<int> lengths{1};
      std::vector<MPI_Aint> addresses(1);
      checkMpi(MPI_Get_address(link.status.get(), &addresses[0]),
               "get address");
      for (size_t i : positions) {
        if (inputs.sizes[i] > size_t(std::numeric_limits<int>::max()))
          throw Error("channel '" + bundle.channels()[stage.inputs[i]].name +
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
    }
    // Outputs, per consumer: in the consumer's input order for a stage, in
    // this stage's output order for the worker (MpiStageRanks reads them so).
    ChannelEnds ends = channelEnds(bundle, stage);
    for (int consumer : ends.consumers) {
      OutputLink &link = outputLinks.emplace_back();
      link.stage = consumer;
      for (int channel : linkChannels(bundle, slot->stage, consumer))
        link.positions.push_back(positionIn(stage.outputs, channel));
    }
    if (!ends.toWorker.empty())
      outputLinks.push_back({-1, ends.toWorker});
  }

  /// Receives micro-batch `microBatch`'s channels from every producer;
  /// false when one of them failed on it.
  bool receiveLinks(int64_t microBatch) {
    if (inputLinks.empty())
      return true;
    const int tag = channelTag(microBatch);
    std::vector<MPI_Request> requests(inputLinks.size(), MPI_REQUEST_NULL);
    for (size_t l = 0; l < inputLinks.size(); ++l)
      checkMpi(
          MPI_Irecv(MPI_BOTTOM, 1, inputLinks[l].type,
                    rankFor(ranks, worker, inputLinks[l].stage, microBatch),
                    tag, comm, &requests[l]),
          "channel receive");
    std::vector<int> received(inputLinks.size(), 0);
    for (size_t l = 0; l < inputLinks.size(); ++l) {
      MPI_Status status;
      wait(&requests[l], "channel receive", nullptr, &status);
      checkMpi(MPI_Get_count(&status, MPI_BYTE, &received[l]), "get count");
    }
    bool complete = true;
    for (size_t l = 0; l < inputLinks.size(); ++l) {
      const InputLink &link = inputLinks[l];
      complete &= channelsArrived(received[l], *link.status, 1 + link.bytes,
                                  microBatch, describeEnd(bundle, link.stage));
    }
    return complete;
  }

  /// Sends micro-batch `microBatch`'s outputs to every consumer (or, when
  /// `failed`, the news that there are none).
  void sendLinks(int64_t microBatch, bool failed) {
    const int tag = channelTag(microBatch);
    for (const OutputLink &link : outputLinks)
      pendingSends.send(packChannels(link.positions, outputs.pointers.data(),
                                     outputs.sizes, failed),
                        rankFor(ranks, worker, link.stage, microBatch), tag,
                        comm, nullptr);
  }

  /// The channels from one producer (-1: the worker), a message per
  /// micro-batch received through `type`.
  struct InputLink {
    int stage = 0;
    size_t bytes = 0;
    std::unique_ptr<uint8_t> status; // where `type` puts the status byte
    MPI_Datatype type = MPI_DATATYPE_NULL;
  };
  /// The channels to one consumer (-1: the worker): positions in the
  /// stage's outputs.
  struct OutputLink {
    int stage = 0;
    std::vector<size_t> positions;
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
  std::vector<std::vector<int>> ranks; // replicaRanks
  std::vector<InputLink> inputLinks;
  std::vector<OutputLink> outputLinks;
  PendingSends pendingSends;
  /// The last step this rank pushed (counted from the worker's start).
  int64_t finishedSteps = 0;
  train::Heartbeat heartbeat;
  train::FaultInjector faults;
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
  PendingSends data; // the worker's channel messages
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

std::string MpiStageRanks::receiveFromAll(int op) {
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
  return failure;
}

void MpiStageRanks::request(int op, const std::vector<char> &payload) {
  sendToAll(op, payload);
  std::string failure = receiveFromAll(op);
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
  fromWorker.assign(ranks.size(), {});
  toWorker.assign(ranks.size(), {});
  for (size_t s = 0; s < ranks.size(); ++s) {
    ChannelEnds ends = channelEnds(bundle, bundle.stages()[s]);
    fromWorker[s] = std::move(ends.fromWorker);
    toWorker[s] = std::move(ends.toWorker);
  }
  MessageWriter out;
  out.put<uint64_t>(settings.seed);
  out.put<float>(settings.initScale);
  out.put<int32_t>(settings.threads);
  out.put<uint8_t>(settings.gpuStagesOnCpu ? 1 : 0);
  out.put<int64_t>(settings.step);
  request(kStageStart, out.bytes());
}

void MpiStageRanks::begin(int64_t count) {
  // Checked here, before any rank starts on the call.
  if (count > 0)
    channelTag(count - 1);
  MessageWriter out;
  out.put<int64_t>(count);
  sendToAll(kStageRun, out.bytes());
}

void MpiStageRanks::sendInputs(int64_t microBatch,
                               const char *const *channels) {
  const int tag = channelTag(microBatch);
  std::vector<const void *> buffers;
  std::vector<size_t> sizes;
  for (size_t s = 0; s < ranks.size(); ++s) {
    if (fromWorker[s].empty())
      continue;
    const StageSpec &spec = bundle->stages()[s];
    buffers.clear();
    sizes.clear();
    for (int channel : spec.inputs) {
      buffers.push_back(channels[channel]);
      sizes.push_back(bundle->channels()[channel].bytes());
    }
    control->data.send(
        packChannels(fromWorker[s], buffers.data(), sizes, false),
        rankFor(ranks, -1, static_cast<int>(s), microBatch), tag,
        job.comms().pipeline, &job.mutex());
  }
}

bool MpiStageRanks::receiveOutputs(int64_t microBatch, char *const *channels) {
  const int tag = channelTag(microBatch);
  // Every producer's receive is posted first: large messages then move as
  // soon as their producer sends.
  std::vector<int> stages;
  std::vector<std::vector<char>> messages;
  std::vector<MPI_Request> requests;
  for (size_t s = 0; s < ranks.size(); ++s) {
    if (toWorker[s].empty())
      continue;
    size_t bytes = 1;
    for (size_t o : toWorker[s])
      bytes += bundle->channels()[bundle->stages()[s].outputs[o]].bytes();
    stages.push_back(static_cast<int>(s));
    messages.emplace_back(bytes);
    requests.push_back(MPI_REQUEST_NULL);
    std::lock_guard<std::mutex> lock(job.mutex());
    checkMpi(MPI_Irecv(messages.back().data(), static_cast<int>(bytes),
                       MPI_BYTE,
                       rankFor(ranks, -1, static_cast<int>(s), microBatch), tag,
                       job.comms().pipeline, &requests.back()),
             "channel receive");
  }
  bool complete = true;
  for (size_t k = 0; k < stages.size(); ++k) {
    MPI_Status status;
    wait(&requests[k], "channel receive", &job.mutex(), &status);
    int received = 0;
    checkMpi(MPI_Get_count(&status, MPI_BYTE, &received), "get count");
    const std::vector<char> &message = messages[k];
    if (!channelsArrived(received, uint8_t(message[0]), message.size(),
                         microBatch, describeEnd(*bundle, stages[k]))) {
      complete = false;
      continue;
    }
    const StageSpec &spec = bundle->stages()[stages[k]];
    const char *cursor = message.data() + 1;
    for (size_t o : toWorker[stages[k]]) {
      const size_t bytes = bundle->channels()[spec.outputs[o]].bytes();
      std::memcpy(channels[spec.outputs[o]], cursor, bytes);
      cursor += bytes;
    }
  }
  return complete;
}

std::string MpiStageRanks::end() {
  std::string failure = receiveFromAll(kStageRun);
  // Every stage rank has received its data by now.
  control->data.waitAll(&job.mutex());
  return failure;
}

void MpiStageRanks::beginFinishStep(int64_t microBatches) {
  MessageWriter out;
  out.put<int64_t>(microBatches);
  sendToAll(kStageFinishStep, out.bytes());
}

void MpiStageRanks::endFinishStep() {
  std::string failure = receiveFromAll(kStageFinishStep);
  if (!failure.empty())
    throw Error(failure);
}

void MpiStageRanks::setEvalMode(bool eval) {
  MessageWriter out;
  out.put<uint8_t>(eval ? 1 : 0);
  request(kStageEvalMode, out.bytes());
}

void MpiStageRanks::discardStep() { request(kStageDiscard, {}); }

void MpiStageRanks::goodbye() { request(kStageGoodbye, {}); }

} // namespace heterps::rt::mpi
