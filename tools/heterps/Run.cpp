//===- Run.cpp - heterps run ----------------------------------------------===//
//
// Compiled with exceptions: the runtime reports errors as heterps::rt::Error,
// and every one ends here as a single message and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "heterps/Driver/Session.h"

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace heterps::driver {

int run(const RunOptions &options) {
  using namespace heterps::rt;
  try {
    ExecutorOptions executorOptions;
    executorOptions.threadsPerStage = options.threads;
    executorOptions.gpuStagesOnCpu = options.gpuStagesOnCpu;
    executorOptions.framesInFlight = options.framesInFlight;
    Session session(options.bundle, executorOptions);
    std::map<std::string, std::string> files;
    for (const std::string &text : options.inputs) {
      size_t split = text.rfind('=');
      if (split == std::string::npos || split == 0)
        throw Error("--input '" + text + "' is not NAME=FILE");
      auto [it, added] =
          files.try_emplace(text.substr(0, split), text.substr(split + 1));
      if (!added)
        throw Error("--input names '" + it->first + "' twice ('" + it->second +
                    "' and '" + text.substr(split + 1) + "')");
    }
    std::vector<HostTensor> inputs;
    for (const InputSpec &spec : session.inputs()) {
      auto file = files.find(spec.name);
      if (file == files.end())
        throw Error("no --input for model input '" + spec.name + "'");
      inputs.push_back(readInput(spec, file->second));
      files.erase(file);
    }
    if (!files.empty())
      throw Error("--input names '" + files.begin()->first +
                  "', which is not an input of the model");

    std::vector<HostTensor> outputs = session.run(inputs);

    if (options.repeat > 0) {
      std::vector<double> seconds;
      for (unsigned i = 0; i < options.repeat; ++i) {
        auto start = std::chrono::steady_clock::now();
        session.run(inputs);
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
      std::sort(seconds.begin(), seconds.end());
      double median = seconds[seconds.size() / 2];
      // Samples per call are known where the batch was bound at compile
      // time; a model with a fixed batch reports calls per second.
      int64_t samples = session.samplesIn(viewsOf(inputs));
      if (samples > 0)
        std::fprintf(stderr,
                     "heterps run: %u runs: median %.6f s, %.1f samples/s\n",
                     options.repeat, median, samples / median);
      else
        std::fprintf(stderr,
                     "heterps run: %u runs: median %.6f s, %.1f calls/s\n",
                     options.repeat, median, 1 / median);
    }

    if (!options.outputDir.empty()) {
      const bool made = ::mkdir(options.outputDir.c_str(), 0777) == 0;
      if (!made && errno != EEXIST)
        throw Error("cannot create '" + options.outputDir +
                    "': " + std::strerror(errno));
      // A directory this run made is removed when it writes nothing there
      // (rmdir removes only an empty one).
      auto removeIfEmpty = llvm::make_scope_exit([&] {
        if (made)
          ::rmdir(options.outputDir.c_str());
      });
      // One file per output, even where two names map to one file name;
      // all of them or none.
      std::set<std::string> taken;
      NpyFileSet files;
      for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string base =
            safeFileName(session.bundle().outputs()[i].name);
        std::string file = base;
        for (int n = 1; !taken.insert(file).second; ++n)
          file = base + "_" + std::to_string(n);
        files.write(options.outputDir + "/" + file + ".npy", outputs[i]);
      }
      files.commit();
      removeIfEmpty.release();
    }
    return 0;
  } catch (const std::exception &error) {
    reportError("run", error.what());
    return 1;
  }
}

} // namespace heterps::driver
