#include "scheduler/ctl/client_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "common/yaml_reader.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace podsched::ctl {
namespace fs = std::filesystem;

std::string ClientConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && xdg[0] == '/') {
    return (fs::path(xdg) / "podctl" / "config.yaml").string();
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (fs::path(home) / ".config" / "podctl" / "config.yaml").string();
  }
  return "";
}

Result<ClientConfig> ReadClientConfig(const std::string& path) {
  ClientConfig out;
  std::error_code ec;
  if (path.empty() || !fs::exists(path, ec)) return out;
  try {
    YAML::Node c = YAML::LoadFile(path);
    if (!c.IsMap() && !c.IsNull()) return InvalidArgument(path + ": expected server: and token: keys");
    for (auto [key, field] : {std::pair{"server", &out.server}, std::pair{"token", &out.token}}) {
      if (!c[key]) continue;
      auto value = YamlAs<std::string>(c[key], path + ": " + key);
      if (!value) return std::unexpected(value.error());
      *field = *value;
    }
  } catch (const YAML::Exception& e) {  // the text is not YAML
    return InvalidArgument(path + ": " + e.what());
  }
  return out;
}

Status WriteClientConfig(const std::string& path, const ClientConfig& config) {
  if (path.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "neither XDG_CONFIG_HOME nor HOME is set: nowhere to write podctl's config");
  }
  const fs::path file(path);
  const fs::path dir = file.parent_path();
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return Status(StatusCode::kUnavailable, "cannot create " + dir.string() + ": " + ec.message());
    ::chmod(dir.c_str(), 0700);
  }
  YAML::Node doc;
  if (fs::exists(file, ec)) {
    try {
      doc = YAML::LoadFile(path);
    } catch (const YAML::Exception&) {
      doc = YAML::Node();  // unreadable: replaced by a clean file
    }
  }
  if (!doc.IsMap()) doc = YAML::Node(YAML::NodeType::Map);
  doc["server"] = config.server;
  doc["token"] = config.token;
  YAML::Emitter out;
  out << doc;
  const std::string text = std::string(out.c_str()) + "\n";

  std::string tmp = (dir / ".config.yaml.XXXXXX").string();
  int fd = ::mkstemp(tmp.data());  // mode 0600
  if (fd < 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot write in " + dir.string() + ": " + std::strerror(errno));
  }
  bool ok = ::fchmod(fd, 0600) == 0;
  for (size_t done = 0; ok && done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(ok ? errno : saved);
    ::unlink(tmp.c_str());
    return Status(StatusCode::kUnavailable, "cannot write " + path + ": " + why);
  }
  if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); d >= 0) {  // the rename is durable
    (void)::fsync(d);
    ::close(d);
  }
  return Status::Ok();
}

Result<int64_t> ParseExpiry(const std::string& text) {
  if (text == "never") return 0;
  const std::string usage = "--expires '" + text.substr(0, 40) +
                            "' is not a lifetime; use a number with s, m, h, d or w (90m, 12h, "
                            "30d, 1w) or 'never'";
  int64_t n = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || p == text.data() || p + 1 != end || n <= 0) return InvalidArgument(usage);
  int64_t unit = 0;
  switch (*p) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default: return InvalidArgument(usage);
  }
  constexpr int64_t kMax = 3650LL * 86400;
  if (n > kMax / unit || n * unit < 60) {
    return InvalidArgument("--expires " + text + ": a token lives between 1 minute and 3650 days");
  }
  return n * unit;
}

}  // namespace podsched::ctl
