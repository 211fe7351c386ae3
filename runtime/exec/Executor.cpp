//===- Executor.cpp - Pipeline of stage replicas --------------------------===//

#include "heterps/Runtime/Executor.h"
#include "heterps/Runtime/AlignedBuffer.h"
#include "heterps/Runtime/MachineMemory.h"
#include "heterps/Runtime/StageABI.h"

#include "FreshLibrary.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <mutex>
#include <pthread.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace heterps::rt {
namespace {

/// A blocking queue of bounded capacity: back-pressure keeps at most
/// `capacity` frames waiting in front of a stage.
template <typename T> class BoundedQueue {
public:
  explicit BoundedQueue(size_t capacity) : capacity(capacity) {}
  void push(T item) {
    std::unique_lock<std::mutex> lock(mutex);
    notFull.wait(lock, [&] { return items.size() < capacity; });
    items.push_back(std::move(item));
    notEmpty.notify_one();
  }
  /// Pops without waiting; false when empty.
  bool tryPop(T &item) {
    std::lock_guard<std::mutex> lock(mutex);
    if (items.empty())
      return false;
    item = std::move(items.front());
    items.pop_front();
    notFull.notify_one();
    return true;
  }
  T pop() {
    std::unique_lock<std::mutex> lock(mutex);
    notEmpty.wait(lock, [&] { return !items.empty(); });
    T item = std::move(items.front());
    items.pop_front();
    notFull.notify_one();
    return item;
  }

private:
  size_t capacity;
  std::deque<T> items;
  std::mutex mutex;
  std::condition_variable notEmpty, notFull;
};

/// One micro-batch on its way through the pipeline: a buffer per channel.
/// `data` points at the owned buffers, or for a single-frame call straight
/// at the caller's input and output tensors, which saves two copies.
struct Frame {
  int64_t sequence = 0;
  std::vector<AlignedBuffer> buffers;
  std::vector<char *> data;
  std::string error;
  void useOwnBuffers() {
    for (size_t c = 0; c < buffers.size(); ++c)
      data[c] = buffers[c].data();
  }
};

bool fileExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

std::string describe(const StageSpec &stage) {
  return stage.name + " (" + stage.device + ")";
}

thread_local MicroBatchContext currentContext;

} // namespace

MicroBatchContext currentMicroBatch() { return currentContext; }

MicroBatchScope::MicroBatchScope(int64_t microBatch, int stage)
    : saved(currentContext) {
  currentContext = {microBatch, stage};
}

MicroBatchScope::~MicroBatchScope() { currentContext = saved; }

struct StageEntryPoints {
  decltype(&hps_stage_create) create = nullptr;
  decltype(&hps_stage_run) run = nullptr;
  decltype(&hps_stage_destroy) destroy = nullptr;
  decltype(&hps_stage_buffers) buffers = nullptr; // stage ABI 6 and later
};

/// Binds the stage ABI's entry points of the dlopened `handle` into
/// `library`; "" or why `path` is no stage program this runtime loads.
static std::string bindStageLibrary(void *handle, const std::string &path,
                                    StageEntryPoints &library) {
  auto version = reinterpret_cast<decltype(&hps_stage_abi_version)>(
      ::dlsym(handle, "hps_stage_abi_version"));
  library.create = reinterpret_cast<decltype(library.create)>(
      ::dlsym(handle, "hps_stage_create"));
  library.run =
      reinterpret_cast<decltype(library.run)>(::dlsym(handle, "hps_stage_run"));
  library.destroy = reinterpret_cast<decltype(library.destroy)>(
      ::dlsym(handle, "hps_stage_destroy"));
  if (!version || !library.create || !library.run || !library.destroy)
    return path + " is not a stage program";
  if (version() < HPS_STAGE_ABI_OLDEST || version() > HPS_STAGE_ABI_VERSION)
    return path + " was built for stage ABI " + std::to_string(version()) +
           ", this runtime loads " + std::to_string(HPS_STAGE_ABI_OLDEST) +
           " to " + std::to_string(HPS_STAGE_ABI_VERSION);
  if (version() >= 6) {
    library.buffers = reinterpret_cast<decltype(library.buffers)>(
        ::dlsym(handle, "hps_stage_buffers"));
    if (!library.buffers)
      return path + " was built for stage ABI " + std::to_string(version()) +
             " but lacks hps_stage_buffers";
  }
  return "";
}

std::string stageLibraryError(const std::string &path) {
  std::string error;
  void *handle = openFreshLibrary(path, error);
  if (!handle)
    return error;
  StageEntryPoints library;
  error = bindStageLibrary(handle, path, library);
  // Closed again: a library rebuilt at this path must be the one a run
  // then loads, not this one.
  ::dlclose(handle);
  return error;
}

const void *StageProgram::lookupTable(void *self, const char *name) {
  const Bundle &bundle = static_cast<StageProgram *>(self)->bundle;
  for (const TableSpec &table : bundle.tables())
    if (table.name == name)
      return bundle.weights() + table.offset;
  return nullptr;
}

// The training callbacks: config.server is this program (lookupTable needs
// it), so they forward to the caller's StageServer with its context.
const float *StageProgram::lookupParameter(void *self, const char *name) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.lookupParameter(target.context, name);
}
int StageProgram::pullRows(void *self, const char *table, const int64_t *ids,
                           size_t count, float *rows, char *error,
                           size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pullRows(target.context, table, ids, count, rows, error,
                         errorBytes);
}
int StageProgram::pushRows(void *self, const char *table, const int64_t *ids,
                           size_t count, const float *gradients, char *error,
                           size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pushRows(target.context, table, ids, count, gradients, error,
                         errorBytes);
}
int StageProgram::pushDense(void *self, const char *name, const float *gradient,
                            size_t count, char *error, size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pushDense(target.context, name, gradient, count, error,
                          errorBytes);
}

int StageProgram::rowsOnDevice(void *self, const char *table) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.rowsOnDevice(target.context, table);
}
uint64_t StageProgram::parameterVersion(void *self) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.parameterVersion(target.context);
}
int StageProgram::pullRowsToDevice(void *self, const char *table,
                                   const int64_t *ids, size_t count,
                                   float *rows, char *error,
                                   size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pullRowsToDevice(target.context, table, ids, count, rows, error,
                                 errorBytes);
}

int StageProgram::pushRowsFromDevice(void *self, const char *table,
                                     const int64_t *ids, size_t count,
                                     const float *gradients, char *error,
                                     size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pushRowsFromDevice(target.context, table, ids, count, gradients,
                                   error, errorBytes);
}

int StageProgram::parameterOnDevice(void *self, const char *name,
                                    const float **values, char *error,
                                    size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.parameterOnDevice(target.context, name, values, error,
                                  errorBytes);
}

int StageProgram::pushDenseFromDevice(void *self, const char *name,
                                      const float *gradient, size_t count,
                                      char *error, size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pushDenseFromDevice(target.context, name, gradient, count,
                                    error, errorBytes);
}

int StageProgram::pullRowsByDeviceIds(void *self, const char *table,
                                      const int64_t *ids, size_t count,
                                      float *rows, char *error,
                                      size_t errorBytes) {
  const StageServer &target =
      *static_cast<StageProgram *>(self)->options.server;
  return target.pullRowsByDeviceIds(target.context, table, ids, count, rows,
                                    error, errorBytes);
}

/// A pipeline stage's buffers: its channels.
static StageBuffers channelBuffers(const Bundle &bundle,
                                   const StageSpec &stage) {
  StageBuffers buffers;
  for (int channel : stage.inputs)
    buffers.inputs.push_back(bundle.channels().at(channel).bytes());
  for (int channel : stage.outputs)
    buffers.outputs.push_back(bundle.channels().at(channel).bytes());
  return buffers;
}

StageProgram::StageProgram(const Bundle &bundle, int index,
                           const ExecutorOptions &options, int replicas)
    : StageProgram(bundle, bundle.stages().at(index),
                   channelBuffers(bundle, bundle.stages().at(index)), options,
                   replicas) {}

StageProgram::StageProgram(const Bundle &bundle, const StageSpec &spec,
                           const StageBuffers &buffers,
                           const ExecutorOptions &options, int replicas)
    : bundle(bundle), stage(&spec), options(options),
      library(std::make_unique<StageEntryPoints>()) {
  const StageSpec &stage = *this->stage;
  std::string kind = stage.gpu && !options.gpuStagesOnCpu ? "gpu" : "cpu";
  auto file = stage.libraries.find(kind);
  if (file == stage.libraries.end() || !fileExists(bundle.path(file->second))) {
    if (kind == "gpu")
      throw Error(describe(stage) +
                  " runs on a GPU class but the bundle has no GPU build of "
                  "it (no CUDA compiler when it was compiled); run with "
                  "--gpu-stages-on-cpu to use its CPU build");
    throw Error(describe(stage) + ": " +
                bundle.path(file == stage.libraries.end() ? stage.name + ".so"
                                                          : file->second) +
                " is missing; build the bundle with `heterps compile`");
  }
  std::string path = bundle.path(file->second);
  // Never closed: kernels may register process-wide state (OpenMP pools,
  // CUDA contexts) that outlives the instances.
  std::string loadError;
  void *handle = openFreshLibrary(path, loadError);
  if (!handle)
    throw Error(describe(stage) + ": " + loadError);
  if (std::string error = bindStageLibrary(handle, path, *library);
      !error.empty())
    throw Error(describe(stage) + ": " + error);
  checkBuffers(buffers);

  HpsStageConfig config{};
  config.weights = bundle.weights();
  config.weightsBytes = bundle.weightsBytes();
  config.lookupTable = &StageProgram::lookupTable;
  config.server = this;
  config.threads = options.threadsPerStage;
  if (const StageServer *server = options.server) {
    if (!server->lookupParameter || !server->pullRows || !server->pushRows ||
        !server->pushDense)
      throw Error("the executor's parameter server lacks a callback");
    config.lookupParameter = &StageProgram::lookupParameter;
    config.pullRows = &StageProgram::pullRows;
    config.pushRows = &StageProgram::pushRows;
    config.pushDense = &StageProgram::pushDense;
    if (server->parameterVersion)
      config.parameterVersion = &StageProgram::parameterVersion;
    // Memory of a GPU for a stage that runs on one only.
    const bool onGpu = kind == "gpu";
    if (onGpu && server->rowsOnDevice && server->pullRowsToDevice) {
      config.rowsOnDevice = &StageProgram::rowsOnDevice;
      config.pullRowsToDevice = &StageProgram::pullRowsToDevice;
      if (server->pushRowsFromDevice)
        config.pushRowsFromDevice = &StageProgram::pushRowsFromDevice;
      if (server->pullRowsByDeviceIds)
        config.pullRowsByDeviceIds = &StageProgram::pullRowsByDeviceIds;
    }
    if (onGpu && server->parameterOnDevice && server->pushDenseFromDevice) {
      config.parameterOnDevice = &StageProgram::parameterOnDevice;
      config.pushDenseFromDevice = &StageProgram::pushDenseFromDevice;
    }
  }
  // Created on a thread of their own: creating runs kernels, and libgomp
  // keeps the team of a thread that opened a parallel region, which fork()
  // does not copy. Created on the caller's thread, a forked child of the
  // caller (a Python worker process) hung in its first parallel region.
  std::string error;
  instances.reserve(replicas);
  auto create = [&] {
    for (int r = 0; r < replicas && error.empty(); ++r) {
      char message[1024] = "";
      if (void *instance = library->create(&config, message, sizeof message))
        instances.push_back(instance);
      else
        error = describe(stage) + ": " + message;
    }
  };
  try {
    std::thread(create).join();
  } catch (const std::system_error &failure) {
    error = describe(stage) +
            ": cannot start a thread to create its "
            "instances: " +
            failure.what();
  }
  if (!error.empty()) {
    for (void *created : instances)
      library->destroy(created);
    instances.clear();
    throw Error(error);
  }
}

void StageProgram::checkBuffers(const StageBuffers &buffers) const {
  if (!library->buffers)
    return; // built before stage ABI 6: trusted
  size_t counts[2] = {};
  const uint64_t *bytes[2] = {};
  library->buffers(&counts[0], &bytes[0], &counts[1], &bytes[1]);
  const std::vector<uint64_t> *expected[2] = {&buffers.inputs,
                                              &buffers.outputs};
  const char *kind[2] = {"input", "output"};
  for (int k = 0; k < 2; ++k) {
    const std::string which = std::string(kind[k]) + "s";
    if (counts[k] != expected[k]->size())
      throw Error(describe(*stage) + ": its library takes " +
                  std::to_string(counts[k]) + " " + which +
                  ", the manifest lists " +
                  std::to_string(expected[k]->size()) +
                  "; the library does not belong to this manifest "
                  "(rebuild the bundle with `heterps compile`)");
    for (size_t i = 0; i < counts[k]; ++i)
      if (bytes[k][i] != (*expected[k])[i])
        throw Error(describe(*stage) + ": its library's " + kind[k] + " " +
                    std::to_string(i) + " holds " +
                    std::to_string(bytes[k][i]) + " bytes, the manifest's " +
                    std::to_string((*expected[k])[i]) +
                    "; the library does not belong to this manifest "
                    "(rebuild the bundle with `heterps compile`)");
  }
}

StageProgram::~StageProgram() {
  for (void *instance : instances)
    library->destroy(instance);
}

std::string StageProgram::run(int replica, int64_t microBatch,
                              const void *const *inputs, void *const *outputs) {
  char error[1024] = "";
  MicroBatchScope context(microBatch, stage->index);
  if (library->run(instances.at(replica), inputs, outputs, error,
                   sizeof error) != 0)
    return describe(*stage) + ": " + error;
  return "";
}

/// Frames in flight: as asked, else one per stage replica and one more so
/// that a step of as many micro-batches keeps every replica working; beyond
/// 4 only within an eighth of the machine's memory (a frame holds every
/// channel of a micro-batch).
static size_t framesFor(const Bundle &bundle, const ExecutorOptions &options) {
  if (options.framesInFlight < 0)
    throw Error("--frames " + std::to_string(options.framesInFlight) +
                " must be at least 0 (0: as the stages need)");
  // Far past any machine, the kernel libraries' thread pools fail on their
  // own (2^31 - 1 threads: a division by zero in oneDNN).
  if (options.threadsPerStage < 0 ||
      options.threadsPerStage > kMostThreadsPerStage)
    throw Error("--threads " + std::to_string(options.threadsPerStage) +
                " must be 0 (the backend's default) to " +
                std::to_string(kMostThreadsPerStage));
  size_t replicas = 0;
  for (const StageSpec &stage : bundle.stages())
    replicas += stage.replicas;
  double frameBytes = 0;
  for (const ChannelSpec &channel : bundle.channels())
    frameBytes += double(channel.bytes());
  const double memory = machineMemoryBytes();
  if (options.framesInFlight > 0) {
    // Asked for: refused where the frames alone would take half the
    // machine's memory, instead of being killed for it.
    if (options.framesInFlight > 65536)
      throw Error("--frames " + std::to_string(options.framesInFlight) +
                  " is more than 65536 micro-batches in flight");
    const double bytes = double(options.framesInFlight) * frameBytes;
    if (memory > 0 && bytes > memory / 2)
      throw Error("--frames " + std::to_string(options.framesInFlight) +
                  " would hold " + std::to_string(int64_t(bytes / (1 << 20))) +
                  " MiB of micro-batches, more than half of this machine's "
                  "memory; give fewer");
    return size_t(options.framesInFlight);
  }
  const double budget = memory / 8;
  const size_t affordable =
      frameBytes > 0 && budget > 0 ? size_t(budget / frameBytes) : replicas + 1;
  return std::max<size_t>(4, std::min(replicas + 1, affordable));
}

struct Executor::Impl {
  const Bundle &bundle;
  ExecutorOptions options;
  /// Per stage, unless the stages are remote.
  std::vector<std::unique_ptr<StageProgram>> programs;
  std::vector<std::unique_ptr<BoundedQueue<Frame *>>> queues; // per stage
  std::unique_ptr<BoundedQueue<Frame *>> done, free;
  std::vector<std::unique_ptr<Frame>> frames;
  std::vector<std::thread> workers;

  Impl(const Bundle &bundle, ExecutorOptions options)
      : bundle(bundle), options(options) {}

  void start() {
    const auto &stages = bundle.stages();
    // First: the options' errors come before any stage loads.
    const size_t inFlight = framesFor(bundle, options);
    if (!options.remote)
      for (size_t s = 0; s < stages.size(); ++s)
        programs.push_back(std::make_unique<StageProgram>(
            bundle, static_cast<int>(s), options, stages[s].replicas));
    // Remote stages schedule themselves: no queues, no replica threads.
    if (!options.remote)
      for (size_t i = 0; i < stages.size(); ++i)
        queues.push_back(std::make_unique<BoundedQueue<Frame *>>(inFlight));
    done = std::make_unique<BoundedQueue<Frame *>>(inFlight);
    free = std::make_unique<BoundedQueue<Frame *>>(inFlight);
    for (size_t i = 0; i < inFlight; ++i) {
      frames.push_back(std::make_unique<Frame>());
      for (const ChannelSpec &channel : bundle.channels())
        frames.back()->buffers.emplace_back(channel.bytes());
      frames.back()->data.resize(bundle.channels().size());
      frames.back()->useOwnBuffers();
      free->push(frames.back().get());
    }
    std::vector<int> started(queues.size(), 0);
    try {
      for (size_t s = 0; s < queues.size(); ++s)
        for (int r = 0; r < stages[s].replicas; ++r, ++started[s])
          workers.emplace_back([this, s, r] { work(s, r); });
    } catch (const std::system_error &error) {
      // Too many threads: the started ones end before the error leaves.
      for (size_t s = 0; s < queues.size(); ++s)
        for (int r = 0; r < started[s]; ++r)
          queues[s]->push(nullptr);
      for (std::thread &worker : workers)
        worker.join();
      workers.clear();
      throw Error(std::string("cannot start a thread for every stage "
                              "replica: ") +
                  error.what());
    }
  }

  /// A replica's loop: run every frame that reaches it, pass it on. A frame
  /// that failed upstream passes through untouched.
  void work(size_t s, int replica) {
    while (Frame *frame = queues[s]->pop()) {
      runStage(s, replica, *frame);
      (s + 1 < queues.size() ? *queues[s + 1] : *done).push(frame);
    }
  }

  /// Runs one replica of stage `s` on `frame`; a frame that failed upstream
  /// passes through untouched.
  void runStage(size_t s, int replica, Frame &frame) {
    if (!frame.error.empty())
      return;
    const StageSpec &stage = bundle.stages()[s];
    const void *in[64];
    void *out[64];
    std::vector<const void *> inHeap;
    std::vector<void *> outHeap;
    const void **inputs = in;
    void **outputs = out;
    if (stage.inputs.size() > 64 || stage.outputs.size() > 64) {
      inHeap.resize(stage.inputs.size());
      outHeap.resize(stage.outputs.size());
      inputs = inHeap.data();
      outputs = outHeap.data();
    }
    for (size_t i = 0; i < stage.inputs.size(); ++i)
      inputs[i] = frame.data[stage.inputs[i]];
    for (size_t i = 0; i < stage.outputs.size(); ++i)
      outputs[i] = frame.data[stage.outputs[i]];
    frame.error = programs[s]->run(replica, frame.sequence, inputs, outputs);
  }

  /// Runs `frameCount` micro-batches on the remote stages: sends each one's
  /// inputs while a frame is free, else receives the oldest one's outputs.
  template <typename Feed, typename Collect>
  void runRemote(int64_t frameCount, Feed feed, Collect collect) {
    RemoteStages &remote = *options.remote;
    remote.begin(frameCount);
    std::deque<Frame *> sent;
    // A send or receive that throws (a lost rank) leaves the frames it had
    // in flight to the next call, not lost with this one.
    struct ReturnFrames {
      std::deque<Frame *> &sent;
      BoundedQueue<Frame *> &free;
      ~ReturnFrames() {
        for (Frame *frame : sent)
          free.push(frame);
      }
    } returnFrames{sent, *free};
    for (int64_t next = 0, received = 0; received < frameCount;) {
      Frame *frame = nullptr;
      if (next < frameCount && free->tryPop(frame)) {
        sent.push_back(frame);
        feed(frame, next++);
        remote.sendInputs(frame->sequence, frame->data.data());
        continue;
      }
      frame = sent.front();
      if (!remote.receiveOutputs(frame->sequence, frame->data.data()))
        frame->error = "micro-batch " + std::to_string(frame->sequence) +
                       " failed in a remote stage";
      sent.pop_front();
      collect(frame);
      free->push(frame);
      ++received;
    }
    // The stage that failed names itself here, before the frames' marker.
    std::string error = remote.end();
    if (!error.empty())
      throw Error(error);
  }

  void stop() {
    for (size_t s = 0; s < queues.size(); ++s)
      for (int r = 0; r < bundle.stages()[s].replicas; ++r)
        queues[s]->push(nullptr);
    for (std::thread &worker : workers)
      worker.join();
    workers.clear();
    programs.clear();
  }
};

namespace {
/// Set in a child process made by fork(). libgomp does not survive a fork:
/// a thread that ran a parallel region keeps a team whose threads stayed
/// in the parent, and its next region waits for them forever. So a forked
/// child runs no stage on its caller's thread (which may have run the
/// parent's stages), only on the executor's own threads, made in the child.
std::atomic<bool> inForkedChild{false};
[[maybe_unused]] const int forkHandler =
    pthread_atfork(nullptr, nullptr, [] { inForkedChild.store(true); });
} // namespace

Executor::Executor(const Bundle &bundle, ExecutorOptions options)
    : impl(std::make_unique<Impl>(bundle, options)), ownerProcess(getpid()) {
  impl->start();
}

Executor::~Executor() {
  // In a forked child the stage threads are the parent's: there are none
  // here to stop or join, and the stages may hold what only the parent can
  // release (CUDA contexts). Left as they are.
  if (!madeInThisProcess()) {
    (void)impl.release();
    return;
  }
  impl->stop();
}

bool Executor::madeInThisProcess() const { return getpid() == ownerProcess; }

size_t Executor::framesInFlight() const { return impl->frames.size(); }

int64_t samplesOfRun(const Bundle &bundle,
                     const std::vector<TensorView> &inputs) {
  const auto &specs = bundle.inputs();
  if (inputs.size() != specs.size())
    throw Error("the model takes " + std::to_string(specs.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  // Samples in this call: batched inputs agree on dim 0.
  int64_t samples = -1;
  const InputSpec *first = nullptr;
  for (size_t i = 0; i < specs.size(); ++i) {
    const InputSpec &spec = specs[i];
    const TensorView &tensor = inputs[i];
    checkInput(spec, tensor.dtype, tensor.shape);
    if (spec.batched) {
      if (samples >= 0 && samples != tensor.shape[0])
        throw Error("batched inputs disagree on the number of samples: '" +
                    first->name + "' holds " + std::to_string(samples) + ", '" +
                    spec.name + "' holds " + std::to_string(tensor.shape[0]));
      samples = tensor.shape[0];
      first = first ? first : &spec;
    }
  }
  int64_t batch = bundle.batch() > 0 ? bundle.batch() : 1;
  // A data-dependent extent covers the whole call (NonZero of a batch is
  // not the micro-batches' NonZeros joined), and the padding of a short
  // call would count in it.
  // So does an output that mixes samples: micro-batches would give it
  // another answer. (Training steps are whole micro-batches by design.)
  if (samples >= 0 && samples != batch)
    for (const OutputSpec &spec : bundle.outputs()) {
      if (spec.extentOutput >= 0)
        throw Error("output '" + spec.name +
                    "' has a data-dependent extent, so the model runs "
                    "whole batches only: feed " +
                    std::to_string(batch) + " samples, not " +
                    std::to_string(samples));
      if (!spec.mixesSamples.empty() && !bundle.training())
        throw Error("output '" + spec.name +
                    "' mixes the samples of a batch (" + spec.mixesSamples +
                    "), so the model runs whole batches only: feed " +
                    std::to_string(batch) + " samples, not " +
                    std::to_string(samples));
    }
  return samples;
}

std::vector<HostTensor> Executor::run(const std::vector<TensorView> &inputs) {
  if (!madeInThisProcess())
    throw Error("the executor was made in process " +
                std::to_string(ownerProcess) +
                ", which forked this one: its stage threads stayed there; "
                "make another executor here");
  const Bundle &bundle = impl->bundle;
  const auto &specs = bundle.inputs();
  const int64_t samples = samplesOfRun(bundle, inputs);
  const int64_t batch = bundle.batch() > 0 ? bundle.batch() : 1;
  int64_t frameCount = samples < 0 ? 1 : (samples + batch - 1) / batch;
  // No samples still run one micro-batch, of padding, for an output
  // without a batch that the stages compute: it depends on no sample (one
  // that mixes them refused another count above), and without the run it
  // came back zero-filled.
  if (samples == 0) {
    const auto &outputSpecs = bundle.outputs();
    frameCount = std::any_of(outputSpecs.begin(), outputSpecs.end(),
                             [](const OutputSpec &spec) {
                               return !spec.batched &&
                                      spec.source == OutputSpec::Channel;
                             })
                     ? 1
                     : 0;
  }

  std::vector<HostTensor> outputs;
  for (const OutputSpec &spec : bundle.outputs()) {
    Shape shape = spec.shape;
    if (spec.batched && samples >= 0)
      shape[0] = samples;
    outputs.emplace_back(spec.dtype, shape);
  }

  // Rows [first, first + count) of a batched tensor, or all of it.
  auto rowBytes = [](const TensorSpec &spec) {
    return spec.shape.empty()
               ? spec.bytes()
               : spec.bytes() / std::max<int64_t>(spec.shape[0], 1);
  };
  auto feed = [&](Frame *frame, int64_t f) {
    frame->sequence = f;
    frame->error.clear();
    for (size_t i = 0; i < specs.size(); ++i) {
      const InputSpec &spec = specs[i];
      const TensorView &tensor = inputs[i];
      for (int channel : spec.channels) {
        char *buffer = frame->data[channel];
        size_t bytes = bundle.channels()[channel].bytes();
        if (buffer == tensor.data)
          continue; // read in place
        if (!spec.batched) {
          std::memcpy(buffer, tensor.data, bytes);
          continue;
        }
        size_t row = rowBytes(spec);
        int64_t first = f * batch;
        int64_t count = std::min(batch, samples - first);
        std::memcpy(buffer, tensor.data + first * row, count * row);
        // The last micro-batch is padded with zeros (valid ids too).
        std::memset(buffer + count * row, 0, bytes - count * row);
      }
    }
  };
  std::string firstError;
  auto collect = [&](Frame *frame) {
    if (!frame->error.empty()) {
      if (firstError.empty())
        firstError = frame->error;
      return;
    }
    if (!firstError.empty())
      return;
    for (size_t o = 0; o < outputs.size(); ++o) {
      const OutputSpec &spec = bundle.outputs()[o];
      if (spec.source != OutputSpec::Channel)
        continue;
      const char *buffer = frame->data[spec.index];
      if (buffer == outputs[o].data.data())
        continue; // written in place
      if (!spec.batched || samples < 0) {
        if (frame->sequence == 0)
          std::memcpy(outputs[o].data.data(), buffer, outputs[o].bytes());
        continue;
      }
      size_t row = rowBytes(spec);
      int64_t first = frame->sequence * batch;
      int64_t count = std::min(batch, samples - first);
      std::memcpy(outputs[o].data.data() + first * row, buffer, count * row);
    }
  };

  if (impl->options.remote) {
    impl->runRemote(frameCount, feed, collect);
  } else if (frameCount == 1 && !inForkedChild.load()) {
    // One micro-batch gains nothing from the pipeline: run the stages in
    // order on this thread and skip every hand-off (batch-1 latency).
    Frame *frame = impl->free->pop();
    // Inputs and outputs that fill their channel exactly are used in place.
    for (size_t i = 0; i < specs.size(); ++i)
      if (!specs[i].batched || samples == batch)
        for (int channel : specs[i].channels)
          frame->data[channel] = const_cast<char *>(inputs[i].data);
    for (size_t o = 0; o < outputs.size(); ++o) {
      const OutputSpec &spec = bundle.outputs()[o];
      if (spec.source == OutputSpec::Channel &&
          (!spec.batched || samples < 0 || samples == batch))
        frame->data[spec.index] = outputs[o].data.data();
    }
    feed(frame, 0);
    for (size_t s = 0; s < bundle.stages().size(); ++s)
      impl->runStage(s, 0, *frame);
    collect(frame);
    frame->useOwnBuffers();
    impl->free->push(frame);
  } else {
    // The caller feeds frames while free ones remain and collects finished
    // ones otherwise; every frame in flight fits in every queue, so no push
    // blocks. After a failed micro-batch it feeds no more and waits for the
    // ones in flight: the call fails either way.
    int64_t sent = 0;
    for (int64_t received = 0;
         received < (firstError.empty() ? frameCount : sent);) {
      Frame *frame = nullptr;
      if (sent < frameCount && firstError.empty() &&
          impl->free->tryPop(frame)) {
        feed(frame, sent++);
        impl->queues.empty() ? impl->done->push(frame)
                             : impl->queues[0]->push(frame);
        continue;
      }
      frame = impl->done->pop();
      collect(frame);
      impl->free->push(frame);
      ++received;
    }
  }
  if (!firstError.empty())
    throw Error(firstError);

  for (size_t o = 0; o < outputs.size(); ++o) {
    const OutputSpec &spec = bundle.outputs()[o];
    if (spec.source == OutputSpec::Input) {
      const TensorView &input = inputs[spec.index];
      outputs[o] = HostTensor(input.dtype, input.shape);
      std::memcpy(outputs[o].data.data(), input.data, input.bytes());
    } else if (spec.source == OutputSpec::Constant)
      std::memcpy(outputs[o].data.data(), bundle.weights() + spec.offset,
                  outputs[o].bytes());
  }
  for (size_t o = 0; o < bundle.modelOutputCount(); ++o) {
    const OutputSpec &spec = bundle.outputs()[o];
    if (spec.extentOutput < 0)
      continue;
    int64_t count;
    std::memcpy(&count, outputs[spec.extentOutput].data.data(), sizeof count);
    trimToExtent(spec, count, outputs[o]);
  }
  outputs.resize(bundle.modelOutputCount());
  return outputs;
}

} // namespace heterps::rt
