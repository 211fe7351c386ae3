//===- ParameterClient.cpp - The worker side of the MPI parameter server --===//

#include "Comms.h"
#include "Protocol.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <omp.h>

namespace heterps::rt::mpi {
namespace {
namespace fs = std::filesystem;

std::string absolutePath(const std::string &path) {
  return fs::absolute(fs::path(path)).lexically_normal().string();
}

int parseEnvironmentInt(const char *name, int64_t fallback) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return static_cast<int>(fallback);
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0')
    throw Error(std::string("environment variable ") + name + "='" + text +
                "' is not an integer");
  return static_cast<int>(value);
}
} // namespace

MpiParameterClient::MpiParameterClient(MpiJob &job) : job(job) {
  if (job.role() == Role::Shard)
    throw Error("MpiParameterClient needs a worker or stage rank");
}

MpiParameterClient::~MpiParameterClient() = default;

std::vector<std::vector<char>>
MpiParameterClient::exchange(int op, std::vector<Request> &requests) {
  MPI_Comm comm = job.comms().ps;
  std::lock_guard<std::mutex> lock(job.mutex());
  std::vector<MPI_Request> sends(requests.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < requests.size(); ++i) {
    std::vector<char> &bytes = requests[i].bytes;
    checkMpi(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE,
                       job.shardRank(requests[i].shard), op, comm, &sends[i]),
             "isend");
  }
  // Every reply is received even after an error, so the next exchange
  // starts in step with every shard.
  std::vector<std::vector<char>> replies(requests.size());
  std::string failure;
  for (size_t i = 0; i < requests.size(); ++i) {
    const int source = job.shardRank(requests[i].shard);
    MPI_Status status;
    probe(source, kReply, comm, &status);
    std::vector<char> message = receive(status, comm);
    const std::string what = std::string(opName(op)) + " reply of shard " +
                             std::to_string(requests[i].shard);
    MessageReader in(message, what);
    if (in.get<uint8_t>() != 0) {
      if (failure.empty())
        failure = in.getString();
      continue;
    }
    replies[i].assign(message.begin() + 1, message.end());
  }
  checkMpi(MPI_Waitall(static_cast<int>(sends.size()), sends.data(),
                       MPI_STATUSES_IGNORE),
           "waitall");
  if (!failure.empty())
    throw Error(failure);
  return replies;
}

std::vector<std::vector<char>>
MpiParameterClient::toAllShards(int op, const std::vector<char> &bytes) {
  std::vector<Request> requests;
  for (int shard = 0; shard < job.shards(); ++shard)
    requests.push_back({shard, bytes});
  return exchange(op, requests);
}

void MpiParameterClient::createSparseTable(
    const ps::SparseTableConfig &config) {
  MessageWriter out;
  out.putTableConfig(config);
  toAllShards(kCreateTable, out.bytes());
  std::lock_guard<std::mutex> lock(tablesMutex);
  tables[config.name] = config;
}

void MpiParameterClient::createDenseParam(
    const std::string &name, std::vector<float> initial,
    const ps::OptimizerConfig &optimizer) {
  MessageWriter out;
  out.putString(name);
  out.putOptimizer(optimizer);
  out.putArray(initial);
  std::vector<Request> requests{
      {static_cast<int>(shardOfDense(name, job.shards())),
       std::move(out.bytes())}};
  exchange(kCreateDense, requests);
}

const ps::SparseTableConfig &
MpiParameterClient::tableConfig(const std::string &table) const {
  std::lock_guard<std::mutex> lock(tablesMutex);
  auto found = tables.find(table);
  if (found == tables.end())
    throw Error("parameter server: no sparse table '" + table + "'");
  // std::map never moves its nodes: the reference outlives the lock.
  return found->second;
}

void MpiParameterClient::pull(const std::string &table, const uint64_t *ids,
                              size_t count, float *out) {
  fetchRows(kPull, table, ids, count, out);
}

void MpiParameterClient::peek(const std::string &table, const uint64_t *ids,
                              size_t count, float *out) {
  fetchRows(kPeek, table, ids, count, out);
}

void MpiParameterClient::fetchRows(int op, const std::string &table,
                                   const uint64_t *ids, size_t count,
                                   float *out) {
  if (count == 0)
    return;
  const size_t dim = tableConfig(table).dim;
  auto groups = groupKeysByShard(ids, count, job.shards());
  std::vector<Request> requests;
  std::vector<const std::vector<uint32_t> *> positions;
  std::vector<uint64_t> keys;
  for (size_t shard = 0; shard < groups.size(); ++shard) {
    if (groups[shard].empty())
      continue;
    keys.clear();
    for (uint32_t position : groups[shard])
      keys.push_back(ids[position]);
    MessageWriter message;
    message.putString(table);
    message.putArray(keys);
    requests.push_back({static_cast<int>(shard), std::move(message.bytes())});
    positions.push_back(&groups[shard]);
  }
  std::vector<std::vector<char>> replies = exchange(op, requests);
  std::vector<float> rows;
  for (size_t i = 0; i < replies.size(); ++i) {
    MessageReader in(replies[i], op == kPull ? "pull reply" : "peek reply");
    const std::vector<uint32_t> &where = *positions[i];
    rows.resize(where.size() * dim);
    in.getArrayInto(rows.data(), rows.size());
    for (size_t k = 0; k < where.size(); ++k)
      std::copy(rows.begin() + k * dim, rows.begin() + (k + 1) * dim,
                out + size_t(where[k]) * dim);
  }
}

void MpiParameterClient::push(const std::string &table, const uint64_t *ids,
                              size_t count, const float *gradients) {
  if (count == 0)
    return;
  const size_t dim = tableConfig(table).dim;
  auto groups = groupKeysByShard(ids, count, job.shards());
  std::vector<Request> requests;
  std::vector<uint64_t> keys;
  std::vector<float> values;
  for (size_t shard = 0; shard < groups.size(); ++shard) {
    if (groups[shard].empty())
      continue;
    keys.clear();
    values.clear();
    // Input order within a shard: the shard sums duplicates in this order.
    for (uint32_t position : groups[shard]) {
      keys.push_back(ids[position]);
      values.insert(values.end(), gradients + size_t(position) * dim,
                    gradients + (size_t(position) + 1) * dim);
    }
    MessageWriter message;
    message.putString(table);
    message.putArray(keys);
    message.putArray(values);
    requests.push_back({static_cast<int>(shard), std::move(message.bytes())});
  }
  exchange(kPush, requests);
}

std::vector<float> MpiParameterClient::pullDense(const std::string &name) {
  MessageWriter out;
  out.putString(name);
  std::vector<Request> requests{
      {static_cast<int>(shardOfDense(name, job.shards())),
       std::move(out.bytes())}};
  return MessageReader(exchange(kPullDense, requests)[0], "pull-dense reply")
      .getArray<float>();
}

void MpiParameterClient::pushDense(const std::string &name,
                                   const std::vector<float> &gradient) {
  MessageWriter out;
  out.putString(name);
  out.putArray(gradient);
  std::vector<Request> requests{
      {static_cast<int>(shardOfDense(name, job.shards())),
       std::move(out.bytes())}};
  exchange(kPushDense, requests);
}

std::vector<std::vector<float>>
MpiParameterClient::pullDenseMany(const std::vector<std::string> &names) {
  // One request per shard holding any of the names, in name order.
  std::vector<std::vector<size_t>> byShard(job.shards());
  for (size_t i = 0; i < names.size(); ++i)
    byShard[shardOfDense(names[i], job.shards())].push_back(i);
  std::vector<Request> requests;
  std::vector<const std::vector<size_t> *> positions;
  for (int shard = 0; shard < job.shards(); ++shard) {
    if (byShard[shard].empty())
      continue;
    MessageWriter out;
    out.put<uint32_t>(static_cast<uint32_t>(byShard[shard].size()));
    for (size_t i : byShard[shard])
      out.putString(names[i]);
    requests.push_back({shard, std::move(out.bytes())});
    positions.push_back(&byShard[shard]);
  }
  std::vector<std::vector<char>> replies = exchange(kPullDenseMany, requests);
  std::vector<std::vector<float>> values(names.size());
  for (size_t r = 0; r < replies.size(); ++r) {
    MessageReader in(replies[r], "pull-dense-many reply");
    for (size_t i : *positions[r])
      values[i] = in.getArray<float>();
  }
  return values;
}

void MpiParameterClient::pushDenseMany(
    const std::vector<std::string> &names,
    const std::vector<std::vector<float>> &gradients) {
  std::vector<std::vector<size_t>> byShard(job.shards());
  for (size_t i = 0; i < names.size(); ++i)
    byShard[shardOfDense(names[i], job.shards())].push_back(i);
  std::vector<Request> requests;
  for (int shard = 0; shard < job.shards(); ++shard) {
    if (byShard[shard].empty())
      continue;
    MessageWriter out;
    out.put<uint32_t>(static_cast<uint32_t>(byShard[shard].size()));
    for (size_t i : byShard[shard]) {
      out.putString(names[i]);
      out.putArray(gradients.at(i));
    }
    requests.push_back({shard, std::move(out.bytes())});
  }
  exchange(kPushDenseMany, requests);
}

void MpiParameterClient::endStep() { toAllShards(kEndStep, {}); }

void MpiParameterClient::setLearningRateScale(float scale) {
  MessageWriter out;
  out.put(scale);
  toAllShards(kLearningRateScale, out.bytes());
}

void MpiParameterClient::resumedAtStep(int64_t step) {
  MessageWriter out;
  out.put(step);
  toAllShards(kResumedAtStep, out.bytes());
}

std::vector<std::optional<std::vector<float>>>
MpiParameterClient::readRows(const std::string &table,
                             const std::vector<uint64_t> &keys) {
  std::vector<std::optional<std::vector<float>>> rows(keys.size());
  if (keys.empty())
    return rows;
  auto groups = groupKeysByShard(keys.data(), keys.size(), job.shards());
  std::vector<Request> requests;
  std::vector<const std::vector<uint32_t> *> positions;
  std::vector<uint64_t> part;
  for (size_t shard = 0; shard < groups.size(); ++shard) {
    if (groups[shard].empty())
      continue;
    part.clear();
    for (uint32_t position : groups[shard])
      part.push_back(keys[position]);
    MessageWriter message;
    message.putString(table);
    message.putArray(part);
    requests.push_back({static_cast<int>(shard), std::move(message.bytes())});
    positions.push_back(&groups[shard]);
  }
  std::vector<std::vector<char>> replies = exchange(kReadRows, requests);
  for (size_t i = 0; i < replies.size(); ++i) {
    MessageReader in(replies[i], "read-rows reply");
    for (uint32_t position : *positions[i])
      if (in.get<uint8_t>())
        rows[position] = in.getArray<float>();
  }
  return rows;
}

std::optional<std::vector<float>>
MpiParameterClient::readRow(const std::string &table, uint64_t key) {
  return readRows(table, {key})[0];
}

std::vector<float> MpiParameterClient::readDense(const std::string &name) {
  MessageWriter out;
  out.putString(name);
  std::vector<Request> requests{
      {static_cast<int>(shardOfDense(name, job.shards())),
       std::move(out.bytes())}};
  return MessageReader(exchange(kReadDense, requests)[0], "read-dense reply")
      .getArray<float>();
}

size_t MpiParameterClient::rowCount(const std::string &table) {
  MessageWriter out;
  out.putString(table);
  size_t total = 0;
  for (const std::vector<char> &reply : toAllShards(kRowCount, out.bytes()))
    total += MessageReader(reply, "row-count reply").get<uint64_t>();
  return total;
}

void MpiParameterClient::save(const std::string &directory) {
  const std::string path = absolutePath(directory);
  std::error_code error;
  fs::create_directories(path, error);
  if (error)
    throw Error("checkpoint: cannot create '" + path + "': " + error.message());
  MessageWriter out;
  out.putString(path);
  toAllShards(kSave, out.bytes());
}

void MpiParameterClient::load(const std::string &directory) {
  const std::string path = absolutePath(directory);
  if (job.role() == Role::Worker && job.index() == 0) {
    // Any shard count, a single process's checkpoint included: every shard
    // reads every part and keeps the rows and dense parameters routed to it.
    const std::vector<std::string> parts = ps::checkpointParts(path);
    MessageWriter out;
    out.put<uint32_t>(static_cast<uint32_t>(parts.size()));
    for (const std::string &part : parts)
      out.putString(part);
    toAllShards(kLoad, out.bytes());
  }
  // No worker pulls before every shard has loaded.
  std::lock_guard<std::mutex> lock(job.mutex());
  MPI_Request request;
  checkMpi(MPI_Ibarrier(job.comms().role, &request), "barrier");
  wait(&request, "barrier");
}

void MpiParameterClient::goodbye() {
  std::lock_guard<std::mutex> lock(job.mutex());
  std::vector<MPI_Request> sends(job.shards(), MPI_REQUEST_NULL);
  char nothing = 0;
  for (int shard = 0; shard < job.shards(); ++shard)
    checkMpi(MPI_Isend(&nothing, 0, MPI_BYTE, job.shardRank(shard), kGoodbye,
                       job.comms().ps, &sends[shard]),
             "isend");
  checkMpi(MPI_Waitall(static_cast<int>(sends.size()), sends.data(),
                       MPI_STATUSES_IGNORE),
           "waitall");
}

//===----------------------------------------------------------------------===//
// MpiWorkerGroup
//===----------------------------------------------------------------------===//

MpiWorkerGroup::MpiWorkerGroup(MpiJob &job) : job(job), client(job) {
  // The main thread's own parallel loops (data, metrics) keep to the share
  // too; stage threads set theirs when they start.
  if (int threads = job.kernelThreads(); threads > 0)
    omp_set_num_threads(threads);
  if (job.stages() > 0)
    stageRanks = std::make_unique<MpiStageRanks>(job);
  killAfterStep = parseEnvironmentInt("HETERPS_DEBUG_KILL_AFTER_STEP", -1);
  killWorker = parseEnvironmentInt("HETERPS_DEBUG_KILL_WORKER", 0);
}

std::string MpiWorkerGroup::broadcast(const std::string &value) {
  std::lock_guard<std::mutex> lock(job.mutex());
  uint64_t length = value.size();
  MPI_Request request;
  checkMpi(MPI_Ibcast(&length, 1, MPI_UINT64_T, 0, job.comms().role, &request),
           "bcast");
  wait(&request, "bcast");
  std::string result = job.index() == 0 ? value : std::string(length, '\0');
  checkMpi(MPI_Ibcast(result.data(), static_cast<int>(length), MPI_CHAR, 0,
                      job.comms().role, &request),
           "bcast");
  wait(&request, "bcast");
  return result;
}

uint32_t MpiWorkerGroup::combineStepRequests(uint32_t requests) {
  std::lock_guard<std::mutex> lock(job.mutex());
  uint32_t all = 0;
  MPI_Request request;
  checkMpi(MPI_Iallreduce(&requests, &all, 1, MPI_UINT32_T, MPI_BOR,
                          job.comms().role, &request),
           "allreduce");
  wait(&request, "allreduce");
  return all;
}

void MpiWorkerGroup::finish() {
  if (stageRanks)
    stageRanks->goodbye();
  client.goodbye();
}

void MpiWorkerGroup::barrier() {
  std::lock_guard<std::mutex> lock(job.mutex());
  MPI_Request request;
  checkMpi(MPI_Ibarrier(job.comms().role, &request), "barrier");
  wait(&request, "barrier");
}

std::vector<float> MpiWorkerGroup::gather(const std::vector<float> &values) {
  std::lock_guard<std::mutex> lock(job.mutex());
  const int workers = job.workers();
  int count = static_cast<int>(values.size());
  std::vector<int> counts(workers), offsets(workers);
  MPI_Request request;
  checkMpi(MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0,
                       job.comms().role, &request),
           "gather");
  wait(&request, "gather");
  std::vector<float> all;
  if (job.index() == 0) {
    int total = 0;
    for (int w = 0; w < workers; ++w) {
      offsets[w] = total;
      total += counts[w];
    }
    all.resize(total);
  }
  checkMpi(MPI_Igatherv(values.data(), count, MPI_FLOAT, all.data(),
                        counts.data(), offsets.data(), MPI_FLOAT, 0,
                        job.comms().role, &request),
           "gatherv");
  wait(&request, "gatherv");
  return all;
}

void MpiWorkerGroup::stepFinished(int64_t step) {
  if (step != killAfterStep || job.index() != killWorker)
    return;
  std::fprintf(stderr,
               "heterps: HETERPS_DEBUG_KILL_AFTER_STEP=%lld: worker %d kills "
               "itself\n",
               static_cast<long long>(step), job.index());
  std::fflush(stderr);
  std::raise(SIGKILL);
}

} // namespace heterps::rt::mpi
