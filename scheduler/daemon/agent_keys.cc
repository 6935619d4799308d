#include "scheduler/daemon/agent_keys.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/host_list.h"
#include "common/strings.h"
#include "pod/fleet.h"

namespace podsched::daemon {
namespace {

Result<std::string> ReadWhole(const std::string& path, bool* missing) {
  std::ifstream in(path);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      *missing = true;
      return std::string();
    }
    return Unavailable("cannot read " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Holds an exclusive flock on <data_dir>/agents.keys.lock for its lifetime.
class KeysLock {
 public:
  explicit KeysLock(const std::string& data_dir)
      : fd_(open((AgentKeysPath(data_dir) + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~KeysLock() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

Status WriteAgents(const std::string& data_dir, const std::vector<EnrolledAgent>& agents) {
  return WritePrivateFile(AgentKeysPath(data_dir), FormatAgentKeys(agents), /*replace=*/true);
}

}  // namespace

std::string ServerKeyPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "bus.key").string();
}
std::string AgentKeysPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "agents.keys").string();
}

Result<std::vector<EnrolledAgent>> ParseAgentKeys(std::string_view text) {
  std::vector<EnrolledAgent> out;
  int n = 0;
  for (std::string_view line : SplitOn(text, '\n')) {
    ++n;
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string_view> fields = SplitOn(line, ' ');
    const std::string where = "agents.keys line " + std::to_string(n);
    if (fields.size() < 2 || fields.size() > 3) {
      return InvalidArgument(where + ": expected 'AGENT_ID KEY' or 'AGENT_ID KEY [POD:]HOSTS'");
    }
    EnrolledAgent a{std::string(fields[0]), std::string(fields[1]), std::nullopt, ""};
    if (!IsValidAgentId(a.agent_id)) return InvalidArgument(where + ": bad agent id");
    if (!IsZ85Key(a.public_key)) return InvalidArgument(where + ": not a 40-character Z85 key");
    if (fields.size() == 3) {
      std::string_view hosts_text = fields[2];
      if (const size_t colon = hosts_text.rfind(':'); colon != std::string_view::npos) {
        a.pod = std::string(hosts_text.substr(0, colon));
        hosts_text.remove_prefix(colon + 1);
        if (!pod::IsPodName(a.pod)) return InvalidArgument(where + ": bad pod name");
      }
      auto hosts = ParseHostRanges(hosts_text);
      if (!hosts) return std::unexpected(hosts.error().WithContext(where));
      a.hosts = std::move(*hosts);
    }
    for (const auto& e : out) {
      if (e.agent_id == a.agent_id || e.public_key == a.public_key) {
        return InvalidArgument(where + ": agent id or key given twice");
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string FormatAgentKeys(const std::vector<EnrolledAgent>& agents) {
  std::string out =
      "# Agents enrolled on this podsched's worker bus: AGENT_ID CURVE_PUBLIC_KEY [[POD:]HOSTS].\n"
      "# HOSTS: the hosts the agent may register, by its pod's ids (absent: any host); POD: the\n"
      "# pod they are of (absent: any pod).\n"
      "# Written by `podsched agent enroll|revoke`; podsched re-reads it when it changes.\n";
  for (const auto& a : agents) {
    out += a.agent_id + " " + a.public_key;
    if (a.hosts) out += " " + (a.pod.empty() ? "" : a.pod + ":") + FormatHostRanges(*a.hosts);
    out += "\n";
  }
  return out;
}

Result<std::vector<EnrolledAgent>> ReadAgentKeys(const std::string& path) {
  bool missing = false;
  auto text = ReadWhole(path, &missing);
  if (!text) return std::unexpected(text.error());
  auto parsed = ParseAgentKeys(*text);
  if (!parsed) return std::unexpected(parsed.error().WithContext(path));
  return parsed;
}

Result<KeyFile> LoadOrCreateServerKey(const std::string& data_dir, const KeyGenerator& keygen,
                                      bool* created) {
  const std::string path = ServerKeyPath(data_dir);
  *created = false;
  bool missing = false;
  auto text = ReadWhole(path, &missing);
  if (!text) return std::unexpected(text.error());
  if (!missing) {
    auto k = ParseKeyFile(*text);
    if (!k) return std::unexpected(k.error().WithContext(path));
    return k;
  }
  auto k = keygen();
  if (!k) return k;
  Status s = WritePrivateFile(
      path, FormatKeyFile(*k, "podsched's CURVE key pair for the worker bus; agents pin the "
                              "public key (podsched agent enroll)."),
      /*replace=*/false);
  if (s.code() == StatusCode::kAlreadyExists) return LoadOrCreateServerKey(data_dir, keygen, created);
  if (!s.ok()) return std::unexpected(s);
  *created = true;
  return k;
}

Status CheckDataDirOwner(const std::string& data_dir) {
  struct stat st {};
  if (::stat(data_dir.c_str(), &st) != 0 || st.st_uid == ::geteuid()) return Status::Ok();
  std::string owner = "uid " + std::to_string(st.st_uid);
  std::string name;
  if (const passwd* pw = ::getpwuid(st.st_uid); pw != nullptr) {
    name = pw->pw_name;
    owner = name + " (" + owner + ")";
  }
  return Status(StatusCode::kFailedPrecondition,
                data_dir + " belongs to " + owner + ", not to this process (uid " +
                    std::to_string(::geteuid()) +
                    "): the key files written here would be this process's, mode 0600, and "
                    "podsched could not read them. Run it as the data dir's owner, e.g. "
                    "runuser -u " + (name.empty() ? "OWNER" : name) + " -- podsched --config ... agent ...");
}

Result<KeyFile> EnrollAgent(const std::string& data_dir, const std::string& agent_id,
                            const std::string& bus, const KeyGenerator& keygen,
                            std::optional<std::vector<int32_t>> hosts, std::string pod) {
  if (Status s = CheckDataDirOwner(data_dir); !s.ok()) return std::unexpected(s);
  if (!IsValidAgentId(agent_id)) {
    return InvalidArgument("agent id '" + agent_id + "' must be 1..64 of [A-Za-z0-9._-]");
  }
  if (hosts && hosts->empty()) return InvalidArgument("agent " + agent_id + ": no host given");
  if (!pod.empty() && (!hosts || !pod::IsPodName(pod))) {
    return InvalidArgument("agent " + agent_id + ": pod '" + pod.substr(0, 80) +
                           "' needs hosts and a name of 1-64 characters of A-Z a-z 0-9 . _ -");
  }
  bool created = false;
  auto server = LoadOrCreateServerKey(data_dir, keygen, &created);
  if (!server) return server;
  KeysLock lock(data_dir);
  if (!lock.ok()) return Unavailable("cannot lock " + AgentKeysPath(data_dir) + ".lock");
  auto agents = ReadAgentKeys(AgentKeysPath(data_dir));
  if (!agents) return std::unexpected(agents.error());
  if (std::any_of(agents->begin(), agents->end(), [&](auto& a) { return a.agent_id == agent_id; })) {
    return Error(StatusCode::kAlreadyExists, "agent " + agent_id +
                                                 " is already enrolled; `podsched agent revoke " +
                                                 agent_id + "` first to give it a new key");
  }
  auto k = keygen();
  if (!k) return k;
  k->agent_id = agent_id;
  k->bus = bus;
  k->server_key = server->public_key;
  agents->push_back({agent_id, k->public_key, std::move(hosts), std::move(pod)});
  if (Status s = WriteAgents(data_dir, *agents); !s.ok()) return std::unexpected(s);
  return k;
}

Status RevokeAgent(const std::string& data_dir, const std::string& agent_id) {
  if (Status s = CheckDataDirOwner(data_dir); !s.ok()) return s;
  KeysLock lock(data_dir);
  if (!lock.ok()) return Status(StatusCode::kUnavailable, "cannot lock agents.keys");
  auto agents = ReadAgentKeys(AgentKeysPath(data_dir));
  if (!agents) return agents.error();
  const auto gone = std::remove_if(agents->begin(), agents->end(),
                                   [&](auto& a) { return a.agent_id == agent_id; });
  if (gone == agents->end()) {
    return Status(StatusCode::kNotFound, "agent " + agent_id + " is not enrolled");
  }
  agents->erase(gone, agents->end());
  return WriteAgents(data_dir, *agents);
}

}  // namespace podsched::daemon
