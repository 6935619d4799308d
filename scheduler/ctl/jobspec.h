// The job spec file of `podctl submit -f job.yaml` (docs/jobspec.md): YAML whose keys are the
// API's JobSpec fields. `command` may be a string (with `args` a list) or a list whose first
// element is the program. Unknown keys and wrong types are errors naming the key.
//
// Pure; thread-safe.
#pragma once

#include <string_view>

#include "api.pb.h"
#include "common/status.h"

namespace podsched::ctl {

Result<api::JobSpec> ParseJobSpecYaml(std::string_view yaml);

}  // namespace podsched::ctl
