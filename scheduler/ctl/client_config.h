// podctl's own configuration file, config.yaml ({server, token}): where it lives, reading it,
// and writing it safely (podctl login), plus the duration syntax of `--expires`.
//
// The file holds a bearer token, so it is written with mode 0600 in a directory made with mode
// 0700, atomically: a temp file in the same directory (created 0600 by mkstemp), fsync, rename.
// A reader sees the old file or the new one, never a partial or a world-readable one.
//
// Thread safety: free functions; they touch the file system and the environment only as stated.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace podsched::ctl {

struct ClientConfig {
  std::string server;
  std::string token;
};

// $XDG_CONFIG_HOME/podctl/config.yaml when XDG_CONFIG_HOME is set to an absolute path, else
// $HOME/.config/podctl/config.yaml; "" when neither is set.
std::string ClientConfigPath();
// The file's server and token (either may be empty). A missing file is an empty config;
// errors: not valid YAML, or unreadable.
Result<ClientConfig> ReadClientConfig(const std::string& path);
// Replaces the file's server and token, keeping any other keys. Errors name the path.
Status WriteClientConfig(const std::string& path, const ClientConfig& config);

// `--expires`: "never" (0) or a count with a unit s, m, h, d or w ("90m", "30d"), in seconds.
// Errors: anything else, or a lifetime outside 1 minute .. 3650 days.
Result<int64_t> ParseExpiry(const std::string& text);

}  // namespace podsched::ctl
