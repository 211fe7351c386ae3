//===- StageBuild.cpp - Compiling stage sources into shared objects -------===//
//
// CPU stages: the C++ compiler against libheterps_rt_cpu. GPU stages: nvcc
// against libheterps_rt_gpu when a CUDA toolkit exists (with or without a
// GPU), and always also the C++ compiler, so `heterps run
// --gpu-stages-on-cpu` works anywhere. A training bundle's pass-key program
// builds like a CPU stage. At most one compiler per core runs at a time.
//
//===----------------------------------------------------------------------===//

#include "heterps/Driver/StageBuild.h"
#include "heterps/Cluster/JsonLimits.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <thread>

#include <sys/wait.h>

using namespace llvm;

namespace heterps::driver {
namespace {

/// Where the runtime's headers and libraries are: baked in at build time,
/// overridable for an installed or relocated runtime.
std::string runtimePath(const char *variable, const char *builtIn) {
  if (const char *value = std::getenv(variable))
    return value;
  return builtIn;
}

std::optional<std::string> findProgram(const char *variable,
                                       ArrayRef<StringRef> names,
                                       ArrayRef<StringRef> paths = {}) {
  if (const char *value = std::getenv(variable))
    return std::string(value);
  for (StringRef name : names) {
    if (auto found = sys::findProgramByName(name))
      return *found;
    if (auto found = sys::findProgramByName(name, paths))
      return *found;
  }
  return std::nullopt;
}

/// nvcc's target flags: real code for each architecture the GPU runtime was
/// built for (CMAKE_CUDA_ARCHITECTURES, baked in as "80,90"), so a stage
/// loads without a JIT step and uses the chip's own instructions.
/// HETERPS_CUDA_ARCH overrides the list (commas or semicolons).
std::vector<std::string> cudaTargetFlags() {
  std::string list =
      runtimePath("HETERPS_CUDA_ARCH", HETERPS_CUDA_ARCHITECTURES);
  std::replace(list.begin(), list.end(), ';', ',');
  std::vector<std::string> flags;
  for (StringRef architecture : llvm::split(list, ',')) {
    // CMake spells "90-real" / "90-virtual"; nvcc wants the number.
    StringRef number = architecture.split('-').first.trim();
    if (!number.empty())
      flags.push_back(
          ("-gencode=arch=compute_" + number + ",code=sm_" + number).str());
  }
  return flags;
}

struct Job {
  std::string description, logFile;
  sys::ProcessInfo process;
};

/// Waits for the child `pid` and sets its wait status; with `stopRequested`,
/// polls every 50 ms and returns false, leaving it running, once that
/// answers true. (LLVM's timed sys::Wait sets a process-wide SIGALRM handler
/// and alarm, which a library called from other programs must not.)
bool waitForExit(pid_t pid, const std::function<bool()> &stopRequested,
                 int &status) {
  while (true) {
    pid_t done = ::waitpid(pid, &status, stopRequested ? WNOHANG : 0);
    if (done == pid)
      return true;
    if (done < 0 && errno != EINTR) {
      status = W_EXITCODE(127, 0); // not our child: reported as failed
      return true;
    }
    if (stopRequested && stopRequested())
      return false;
    if (done == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

} // namespace

bool buildStages(StringRef bundle, std::string &error,
                 const std::function<bool()> &stopRequested) {
  SmallString<256> manifestPath(bundle);
  sys::path::append(manifestPath, "manifest.json");
  auto text = MemoryBuffer::getFile(manifestPath);
  if (!text) {
    error = "cannot read " + manifestPath.str().str();
    return false;
  }
  Expected<json::Value> manifest =
      heterps::cluster::parseJson((*text)->getBuffer());
  if (!manifest) {
    error = toString(manifest.takeError());
    return false;
  }
  std::string include =
      runtimePath("HETERPS_RT_INCLUDE", HETERPS_RT_BUILTIN_INCLUDE_DIR);
  std::string libraries =
      runtimePath("HETERPS_RT_LIB", HETERPS_RT_BUILTIN_LIBRARY_DIR);
  // StageSupport.h precompiled with `common` (lib/Driver/CMakeLists.txt);
  // searched first, used only where the compiler finds it valid.
  std::string precompiled =
      runtimePath("HETERPS_RT_PCH", HETERPS_RT_BUILTIN_PCH_DIR);
  std::optional<std::string> cxx = findProgram("CXX", {"c++", "g++"});
  if (!cxx) {
    error = "no C++ compiler found (set CXX)";
    return false;
  }
  std::optional<std::string> nvcc =
      findProgram("NVCC", {"nvcc"}, {"/usr/local/cuda/bin"});
  bool gpuRuntime = sys::fs::exists(libraries + "/libheterps_rt_gpu.so");

  std::vector<Job> jobs;
  // At most one compiler per core at a time: a plan of many stages started
  // two compilers for each at once (27 nvcc on 2 cores for one plan).
  const size_t mostRunning = std::max(1u, std::thread::hardware_concurrency());
  size_t finished = 0;
  bool ok = true;
  bool stopped = false;
  // Ends and reaps every compiler still running (SIGTERM: the compiler
  // drivers remove their temporary files); the build fails.
  auto stop = [&] {
    stopped = true;
    for (; finished != jobs.size(); ++finished) {
      int status;
      ::kill(jobs[finished].process.Pid, SIGTERM);
      ::waitpid(jobs[finished].process.Pid, &status, 0);
      (void)sys::fs::remove(jobs[finished].logFile);
    }
    error = "interrupted";
    ok = false;
  };
  auto finishNext = [&] {
    Job &job = jobs[finished];
    int status = 0;
    if (!waitForExit(job.process.Pid, stopRequested, status))
      return stop();
    ++finished;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      auto log = MemoryBuffer::getFile(job.logFile);
      std::string ending =
          WIFEXITED(status)
              ? "exit status " + std::to_string(WEXITSTATUS(status))
              : "signal " + std::to_string(WTERMSIG(status));
      StringRef tail = log ? (*log)->getBuffer() : StringRef(ending);
      if (tail.size() > 4000)
        tail = tail.take_back(4000);
      if (ok)
        error = "building " + job.description + " failed:\n" + tail.str();
      ok = false;
    }
    (void)sys::fs::remove(job.logFile);
  };
  // Waits for every compiler started, so that none outlives the build.
  auto finishAll = [&] {
    while (finished < jobs.size())
      finishNext();
    return ok;
  };
  auto launch = [&](std::string program, std::vector<std::string> args,
                    std::string description, std::string log) {
    while (jobs.size() - finished >= mostRunning)
      finishNext();
    if (!stopped && stopRequested && stopRequested())
      stop();
    if (stopped)
      return false;
    std::vector<StringRef> argv;
    argv.push_back(program);
    for (const std::string &arg : args)
      argv.push_back(arg);
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                            StringRef(log)};
    Job job{std::move(description), log, {}};
    std::string launchError;
    job.process = sys::ExecuteNoWait(program, argv, std::nullopt, redirects, 0,
                                     &launchError);
    if (job.process.Pid == sys::ProcessInfo::InvalidPid) {
      finishAll();
      error = job.description + ": " + launchError;
      return false;
    }
    jobs.push_back(std::move(job));
    return true;
  };
  // The precompiled header's flags (lib/Driver/CMakeLists.txt) match
  // these and -fPIC.
  std::vector<std::string> common = {"-std=c++17", "-I" + include};
  // The C++ build's optimisation and ISA (runtime/CMakeLists.txt).
  std::vector<std::string> cxxFlags;
  for (StringRef flag : llvm::split(HETERPS_STAGE_CXX_FLAGS, ','))
    cxxFlags.push_back(flag.str());
  const json::Object *root = manifest->getAsObject();
  const json::Array *stages = root ? root->getArray("stages") : nullptr;
  if (!stages) {
    error = manifestPath.str().str() + " has no 'stages' array";
    return false;
  }
  // The stages, then the pass-key program of a training bundle (a CPU
  // program like a stage's; none where the manifest says it is
  // unavailable).
  std::vector<const json::Object *> programs;
  for (const json::Value &stageValue : *stages)
    programs.push_back(stageValue.getAsObject());
  if (const json::Object *passKeys = root->getObject("pass_keys");
      passKeys && passKeys->get("libraries"))
    programs.push_back(passKeys);
  for (const json::Object *stagePtr : programs) {
    const json::Object *outputsPtr =
        stagePtr ? stagePtr->getObject("libraries") : nullptr;
    if (!outputsPtr || !stagePtr->getString("source") ||
        !stagePtr->getString("name") || !outputsPtr->getString("cpu")) {
      finishAll();
      error = manifestPath.str().str() +
              ": a stage lacks 'name', 'source' or 'libraries.cpu'";
      return false;
    }
    const json::Object &stage = *stagePtr;
    std::string source = (bundle + "/" + *stage.getString("source")).str();
    const json::Object &outputs = *outputsPtr;
    std::string name = stage.getString("name")->str();
    // The C++ build, for CPU stages and the CPU fallback of GPU stages.
    std::vector<std::string> args = {"-x", "c++", "-I" + precompiled};
    args.insert(args.end(), common.begin(), common.end());
    args.insert(args.end(), cxxFlags.begin(), cxxFlags.end());
    args.insert(args.end(), {"-fPIC", "-shared", source, "-o",
                             (bundle + "/" + *outputs.getString("cpu")).str(),
                             "-L" + libraries, "-lheterps_rt_cpu",
                             "-Wl,-rpath," + libraries});
    if (!launch(*cxx, args, name + " (C++)",
                (bundle + "/" + name + ".cpu.log").str()))
      return false;
    if (auto gpuLibrary = outputs.getString("gpu");
        gpuLibrary && nvcc && gpuRuntime) {
      std::vector<std::string> cudaArgs = {"-x", "cu"};
      cudaArgs.insert(cudaArgs.end(), common.begin(), common.end());
      // No FMA contraction in the fused loops: the unfused kernels round
      // a multiply and the add after it separately.
      cudaArgs.insert(cudaArgs.end(), {"-O2", "--fmad=false"});
      std::vector<std::string> targets = cudaTargetFlags();
      cudaArgs.insert(cudaArgs.end(), targets.begin(), targets.end());
      cudaArgs.insert(cudaArgs.end(),
                      {"-Xcompiler", "-fPIC", "-shared", source, "-o",
                       (bundle + "/" + *gpuLibrary).str(), "-L" + libraries,
                       "-lheterps_rt_gpu", "-Xlinker", "-rpath," + libraries});
      if (!launch(*nvcc, cudaArgs, name + " (CUDA)",
                  (bundle + "/" + name + ".gpu.log").str()))
        return false;
    }
  }
  return finishAll();
}

} // namespace heterps::driver
