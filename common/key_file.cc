#include "common/key_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/hash.h"
#include "common/strings.h"

namespace podsched {
namespace {

constexpr std::string_view kZ85 =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

Status Errno(const std::string& what) {
  return Status(StatusCode::kUnavailable, what + ": " + std::strerror(errno));
}

}  // namespace

bool IsZ85Key(std::string_view key) {
  return key.size() == 40 && key.find_first_not_of(kZ85) == std::string_view::npos;
}

bool IsValidAgentId(std::string_view id) {
  return !id.empty() && id.size() <= 64 &&
         id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
             std::string_view::npos;
}

std::string NewBusRoutingId(std::string_view agent_id) {
  return std::string(agent_id) + "/" + HexEncode(RandomBytes(16));
}

std::string_view AgentIdOfRoutingId(std::string_view routing_id) {
  return routing_id.substr(0, routing_id.find('/'));
}

Result<KeyFile> ParseKeyFile(std::string_view text) {
  KeyFile k;
  int n = 0;
  for (std::string_view line : SplitOn(text, '\n')) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const size_t colon = line.find(": ");
    const std::string where = "line " + std::to_string(n);
    if (colon == std::string_view::npos) {
      return InvalidArgument(where + ": expected 'name: value'");
    }
    const std::string_view name = line.substr(0, colon), value = line.substr(colon + 2);
    std::string* field = name == "agent-id"     ? &k.agent_id
                         : name == "bus"        ? &k.bus
                         : name == "server-key" ? &k.server_key
                         : name == "public-key" ? &k.public_key
                         : name == "secret-key" ? &k.secret_key
                                                : nullptr;
    if (field == nullptr) {
      return InvalidArgument(where + ": unknown name '" + std::string(name) +
                             "' (agent-id, bus, server-key, public-key, secret-key)");
    }
    if (!field->empty()) return InvalidArgument(where + ": " + std::string(name) + " given twice");
    *field = std::string(value);
    const bool is_key = field != &k.agent_id && field != &k.bus;
    if (is_key && !IsZ85Key(value)) {
      return InvalidArgument(where + ": " + std::string(name) + " is not a 40-character Z85 key");
    }
    if (field == &k.agent_id && !IsValidAgentId(value)) {
      return InvalidArgument(where + ": agent-id must be 1..64 of [A-Za-z0-9._-]");
    }
  }
  if (k.public_key.empty() || k.secret_key.empty()) {
    return InvalidArgument("a key file needs 'public-key: Z85' and 'secret-key: Z85' lines");
  }
  return k;
}

std::string FormatKeyFile(const KeyFile& k, std::string_view comment) {
  std::string out;
  for (std::string_view line : SplitOn(comment, '\n')) {
    if (!comment.empty()) out += "# " + std::string(line) + "\n";
  }
  auto put = [&](const char* name, const std::string& v) {
    if (!v.empty()) out += std::string(name) + ": " + v + "\n";
  };
  put("agent-id", k.agent_id);
  put("bus", k.bus);
  put("server-key", k.server_key);
  put("public-key", k.public_key);
  put("secret-key", k.secret_key);
  return out;
}

Status WritePrivateFile(const std::string& path, std::string_view content, bool replace) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("cannot create " + tmp);
  size_t off = 0;
  bool ok = fchmod(fd, 0600) == 0;  // whatever the umask
  while (ok && off < content.size()) {
    const ssize_t w = write(fd, content.data() + off, content.size() - off);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) off += static_cast<size_t>(w);
  }
  ok = ok && fsync(fd) == 0;
  Status s = ok ? Status::Ok() : Errno("cannot write " + tmp);
  close(fd);
  if (s.ok()) {
    // link() fails when `path` exists: no overwrite, and no window where it is half written.
    if (replace ? rename(tmp.c_str(), path.c_str()) != 0 : link(tmp.c_str(), path.c_str()) != 0) {
      s = errno == EEXIST ? Status(StatusCode::kAlreadyExists, path + " exists; not overwriting")
                          : Errno("cannot create " + path);
    }
  }
  unlink(tmp.c_str());  // after rename: already gone
  // The new name is durable only once its directory is (audit L8: after a power loss the name
  // could be missing, or point at an empty file).
  if (s.ok()) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    const int dfd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) s = Errno("cannot sync the directory of " + path);
    if (dfd >= 0) close(dfd);
  }
  return s;
}

}  // namespace podsched
