//===- ElasticServe.h - heterps elastic serve, submit, ... -*- C++ -*-//

#ifndef HETERPS_TOOLS_HETERPS_ELASTICSERVE_H
#define HETERPS_TOOLS_HETERPS_ELASTICSERVE_H

#include <string>
#include <vector>

namespace heterps::driver {

/// The autoscaler service's commands (docs/Autoscaler.md, "The service");
/// `args` follow the command's name. Return the exit code.
int elasticServeCommand(const std::vector<std::string> &args);
int elasticSubmitCommand(const std::vector<std::string> &args);
int elasticStatusCommand(const std::vector<std::string> &args);
int elasticCancelCommand(const std::vector<std::string> &args);
/// The service commands' usage text.
const char *elasticServeUsage();
/// Replays a finished service run in simulation (ServicePrediction.h).
int elasticPredictCommand(const std::vector<std::string> &args);

} // namespace heterps::driver

#endif // HETERPS_TOOLS_HETERPS_ELASTICSERVE_H
