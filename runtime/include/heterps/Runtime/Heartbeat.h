//===- Heartbeat.h - A rank's liveness file and stop file ------*- C++ -*-===//
//
// What a job supervisor sees of a training job's ranks (docs/Distributed.md,
// "Liveness and fault injection"). With HETERPS_HEARTBEAT_DIR=DIR set, every
// rank (a single `heterps run --train`, an MPI worker, a parameter-server
// shard, a stage rank) runs a background thread that rewrites
// DIR/<role>-<index> every 0.5 s (HETERPS_HEARTBEAT_INTERVAL_MS) with one
// line
//
//   pid=P host=H step=S time=T
//
// written to DIR/.<role>-<index>.tmp and renamed over it, so a reader sees a
// whole line. A stopped process (SIGSTOP) writes no more: that is how the
// supervisor tells a hung rank. With HETERPS_STOP_FILE=PATH the same thread
// watches for PATH to appear, which asks the workers to stop at the next
// step boundary (the Trainer polls stopRequested()). With neither variable
// set no thread runs and setStep() is one relaxed atomic store; with
// them, a new step also wakes the thread to write it.
//
// Nothing here throws into training once started: a failed write is one
// warning on stderr, then silence.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_HEARTBEAT_H
#define HETERPS_RUNTIME_HEARTBEAT_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace heterps::rt::train {

/// The kinds of rank of a training job, as heartbeat files and fault
/// specs (FaultInjection.h) name them. A single process is worker 0.
enum class RankRole { Worker, Shard, Stage };

/// "worker", "shard", "stage".
const char *rankRoleName(RankRole role);
/// The role called `name`, or nullopt.
std::optional<RankRole> parseRankRole(const std::string &name);

/// This machine as ranks report it: $SLURMD_NODENAME when set (Slurm's name
/// of the node, which a hostfile or exclusion list uses), else the host
/// name; characters other than letters, digits, '.', '_' and '-' become '_'
/// so the name is one word of a heartbeat line.
std::string rankHost();

/// One rank's heartbeat file as a reader (a supervisor) sees it.
struct HeartbeatRecord {
  RankRole role = RankRole::Worker;
  int index = 0;
  int pid = 0;
  std::string host;
  int64_t step = 0;
  double time = 0; // Unix seconds
};

/// Every rank's heartbeat file in `directory` (none if it does not exist);
/// a file of another format, or a temporary being replaced, is skipped.
/// The format is Heartbeat::line()'s: one place writes and reads it.
std::vector<HeartbeatRecord> readHeartbeats(const std::string &directory);

struct HeartbeatOptions {
  /// Where the heartbeat file goes (created if missing); empty: none.
  std::string directory;
  /// Between two beats (and two looks at the stop file).
  int64_t intervalMs = 500;
  /// The file whose appearance asks the workers to stop; empty: none.
  std::string stopFile;

  /// HETERPS_HEARTBEAT_DIR, HETERPS_HEARTBEAT_INTERVAL_MS and, for a
  /// worker (the ranks that stop on request), HETERPS_STOP_FILE; throws
  /// Error naming the variable when the interval is not a positive whole
  /// number of milliseconds.
  static HeartbeatOptions fromEnvironment(RankRole role);
  bool active() const { return !directory.empty() || !stopFile.empty(); }
};

class Heartbeat {
public:
  /// Starts the thread when `options` name a directory or a stop file.
  Heartbeat(RankRole role, int index, HeartbeatOptions options);
  /// Stops the thread after one last beat (the final step).
  ~Heartbeat();
  Heartbeat(const Heartbeat &) = delete;
  Heartbeat &operator=(const Heartbeat &) = delete;

  /// The last finished training step this rank knows; a beat says so at
  /// once, so a supervisor counts a killed rank's steps exactly.
  void setStep(int64_t step) {
    step_.store(step, std::memory_order_relaxed);
    if (beating)
      wake.notify_one();
  }
  /// Writes the beat from the calling thread before it returns: a rank
  /// about to end itself (an injected fault) says its last step first,
  /// which the thread, woken by setStep, may not have written yet.
  void beatNow();
  /// Whether the stop file has appeared (once seen, it stays seen).
  bool stopRequested() const {
    return stopSeen.load(std::memory_order_relaxed);
  }
  /// DIR/<role>-<index>, or "" without a directory.
  const std::string &path() const { return path_; }
  /// The line a beat writes now (without the newline).
  std::string line() const;

private:
  void run();
  void beat();
  /// Writes the beat's line (either thread, one at a time).
  void write();
  void lookForStopFile();
  /// The first failure's warning, on stderr in one write; later ones are
  /// dropped (a full disk would otherwise warn twice a second).
  void warnOnce(const std::string &message);

  const HeartbeatOptions options;
  const std::string host;
  std::string path_, temporary;
  std::atomic<int64_t> step_{0};
  std::atomic<bool> stopSeen{false};
  bool warned = false; // under `writing`
  std::mutex mutex;
  /// Held while a beat is written: the thread's and beatNow's share the
  /// temporary file.
  std::mutex writing;
  std::condition_variable wake;
  bool stopping = false;
  /// The step of the last beat (the thread's own).
  int64_t beatStep = -1;
  /// Whether the thread writes beats (set before it starts).
  bool beating = false;
  std::thread thread;
};

} // namespace heterps::rt::train

#endif // HETERPS_RUNTIME_HEARTBEAT_H
