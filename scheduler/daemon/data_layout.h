// The modes of podsched's data directory, so that one machine can serve many users.
//
// podsched runs with umask 077: what it creates is its own (the job database and its WAL, the
// admin token, the bus keys, stored logs: 0600 files, 0700 directories). The default file://
// object store lives inside the data directory (objects/checkpoints), and each user's job must
// reach its own prefix there (objects/checkpoints/users/<user>, which the agent makes 0700 and
// the user's). So the directories on that way are traversable but not listable (0711):
//
//   <data_dir>/                          0711  podsched's; nobody else can list it
//     podsched.db, admin.token, bus.key, agents.keys    0600
//     objects/                           0711
//       logs/                            0700  podsched's: every user's job logs
//       checkpoints/                     0711
//         users/                         0711
//           <user>/                      0700  the user's account (made by the agent)
//
// A directory that already exists keeps the mode its admin gave it, except the 0700 an earlier
// podsched made itself, which is widened to 0711. A private file that others could read is
// narrowed to 0600. What cannot be ensured (an admin's mode, an ancestor directory others cannot
// traverse) is reported as a warning naming the directory and the fix.
//
// Touches only the file system; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace podsched::daemon {

struct DataLayoutReport {
  std::vector<std::string> changed;   // "widened <dir> from 0700 to 0711", ...
  std::vector<std::string> warnings;  // what a site admin should look at
};

// Creates `data_dir` (and missing parents, 0711) and, for each of `checkpoint_url` and `log_url`
// that is a file:// URL below it, the directories down to its users/ level (checkpoints) or the
// logs directory itself, with the modes above. Errors only when a directory cannot be created
// or is not a directory.
Result<DataLayoutReport> PrepareDataLayout(const std::string& data_dir,
                                           const std::string& checkpoint_url,
                                           const std::string& log_url);

}  // namespace podsched::daemon
