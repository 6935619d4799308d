#include "worker/agent/job_account.h"

#include <grp.h>
#include <pwd.h>
#include <shadow.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>

extern char** environ;

namespace podsched::agent {
namespace {

std::string Describe(const JobAccount& a) {
  return "'" + a.name + "' (uid " + std::to_string(a.uid) + ")";
}

Result<JobAccount> FromPasswd(const passwd* pw) {
  JobAccount a;
  a.name = pw->pw_name;
  a.uid = pw->pw_uid;
  a.gid = pw->pw_gid;
  a.home = pw->pw_dir != nullptr ? pw->pw_dir : "";
  a.shell = pw->pw_shell != nullptr ? pw->pw_shell : "";
  int n = 32;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
    if (n > 65536) return Internal("getgrouplist of '" + a.name + "': too many groups");
    groups.resize(static_cast<size_t>(n) * 2);
    n = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(n));
  a.groups = std::move(groups);
  return a;
}

template <typename Lookup>
Result<JobAccount> LookUp(const std::string& what, Lookup lookup) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  int rc = 0;
  while ((rc = lookup(&pw, buf.data(), buf.size(), &found)) == ERANGE && buf.size() < (1 << 22)) {
    buf.resize(buf.size() * 2);
  }
  if (rc != 0) return Internal("looking up the Unix account " + what + ": " + std::strerror(rc));
  if (found == nullptr) {
    return Error(StatusCode::kNotFound, "there is no Unix account " + what + " on this machine");
  }
  return FromPasswd(found);
}

// Whether `name`'s shadow entry has an expiry day (days since 1970-01-01) that is today or
// past, as PAM's account check reads it. No entry (NSS without shadow) or no date: false.
bool ShadowExpired(const std::string& name) {
  spwd sp{};
  spwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getspnam_r(name.c_str(), &sp, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return false;
  }
  if (found->sp_expire < 0) return false;
  const long today = static_cast<long>(time(nullptr) / 86400);
  return found->sp_expire <= today;
}

bool Passed(const std::string& name, const std::vector<std::string>& pass) {
  static constexpr const char* kExact[] = {"PATH", "LANG", "LANGUAGE", "TZ"};
  static constexpr const char* kPrefixes[] = {"LC_", "OMPI_MCA_", "PMIX_MCA_", "PRTE_MCA_"};
  for (const char* e : kExact) {
    if (name == e) return true;
  }
  for (const char* p : kPrefixes) {
    if (name.starts_with(p)) return true;
  }
  return std::find(pass.begin(), pass.end(), name) != pass.end();
}

}  // namespace

Result<JobAccount> CheckJobAccount(const JobAccount& wanted, const JobAccount& agent,
                                   const JobAccountPolicy& policy) {
  const JobAccount& runs = policy.jobs_as_agent_user ? agent : wanted;
  if (agent.uid != 0 && runs.uid != agent.uid) {
    return Error(StatusCode::kPermissionDenied,
                 "the job runs as " + Describe(runs) + ", but podworker runs as " +
                     Describe(agent) + " without root and so runs jobs only as " + agent.name +
                     " (run podworker as root to run each job as its user)");
  }
  if (runs.uid == 0 && !policy.allow_root) {
    return Error(StatusCode::kPermissionDenied,
                 "jobs do not run as root unless podworker has --allow-root-jobs (the job's "
                 "account is " + Describe(runs) + ")");
  }
  if (runs.uid != 0 && runs.uid < policy.min_uid && runs.uid != agent.uid) {
    return Error(StatusCode::kPermissionDenied,
                 "the job's account " + Describe(runs) + " is a system account (uid below " +
                     std::to_string(policy.min_uid) +
                     "); podworker --min-job-uid allows lower uids");
  }
  if (runs.uid == agent.uid) return runs;  // the agent's own: chosen by whoever started it
  if (runs.uid == kOverflowUid) {
    return Error(StatusCode::kPermissionDenied,
                 "the job's account " + Describe(runs) +
                     " is the overflow account that unrelated daemons share; map the user to an "
                     "account of their own");
  }
  static constexpr const char* kNoLoginShells[] = {"/usr/sbin/nologin", "/sbin/nologin",
                                                   "/bin/false", "/usr/bin/false"};
  for (const char* shell : kNoLoginShells) {
    if (runs.shell == shell) {
      return Error(StatusCode::kPermissionDenied,
                   "the job's account " + Describe(runs) + " has the shell " + runs.shell +
                       ", which refuses logins: it is not a person's account (give it a login "
                       "shell if it should run jobs)");
    }
  }
  if (runs.expired) {
    return Error(StatusCode::kPermissionDenied,
                 "the job's account " + Describe(runs) +
                     " has expired (its expiry date in /etc/shadow has passed)");
  }
  auto denied = [&](gid_t g) {
    return std::find(policy.denied_groups.begin(), policy.denied_groups.end(), g) !=
           policy.denied_groups.end();
  };
  if (denied(runs.gid)) {
    return Error(StatusCode::kPermissionDenied,
                 "the job's account " + Describe(runs) + " has the privileged primary group " +
                     std::to_string(runs.gid) + " (podworker --deny-job-groups)");
  }
  JobAccount out = runs;
  std::erase_if(out.groups, denied);
  return out;
}

std::vector<gid_t> GroupIds(const std::vector<std::string>& names) {
  std::vector<gid_t> out;
  for (const std::string& name : names) {
    group gr{};
    group* found = nullptr;
    std::vector<char> buf(1 << 16);
    if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
      out.push_back(found->gr_gid);
    }
  }
  return out;
}

Result<JobAccount> LookUpAccount(const std::string& name) {
  auto account = LookUp("'" + name + "'", [&](passwd* pw, char* buf, size_t size, passwd** found) {
    return getpwnam_r(name.c_str(), pw, buf, size, found);
  });
  if (account && geteuid() == 0) account->expired = ShadowExpired(name);
  return account;
}

Result<JobAccount> LookUpAccount(uid_t uid) {
  return LookUp("of uid " + std::to_string(uid), [&](passwd* pw, char* buf, size_t size,
                                                     passwd** found) {
    return getpwuid_r(uid, pw, buf, size, found);
  });
}

Result<JobAccount> ResolveJobAccount(const std::string& unix_user,
                                     const JobAccountPolicy& policy) {
  auto agent = LookUpAccount(geteuid());
  if (!agent) return agent;
  if (policy.jobs_as_agent_user) return CheckJobAccount(*agent, *agent, policy);
  if (unix_user.empty()) {
    return InvalidArgument("the Launch names no Unix account (a podsched older than podworker?)");
  }
  auto wanted = LookUpAccount(unix_user);
  if (!wanted) {
    return std::unexpected(wanted.error().WithContext(
        "the job's user runs as Unix account '" + unix_user + "'"));
  }
  return CheckJobAccount(*wanted, *agent, policy);
}

Status CheckAgentPolicy(const JobAccountPolicy& policy, uid_t agent_uid) {
  if (agent_uid == 0 && policy.jobs_as_agent_user && !policy.allow_root) {
    return Status(StatusCode::kInvalidArgument,
                  "--jobs-as-agent-user as root would run every job as root: add "
                  "--allow-root-jobs to mean it, or run podworker as root without "
                  "--jobs-as-agent-user to run each job as its user");
  }
  return Status::Ok();
}

std::vector<std::string> JobEnvironment(const JobAccount& account,
                                        const std::vector<std::string>& agent_env,
                                        const std::vector<std::string>& pass,
                                        const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> vars;
  auto add = [&](const std::string& kv) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) vars[kv.substr(0, eq)] = kv;
  };
  for (const auto& kv : agent_env) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos && Passed(kv.substr(0, eq), pass)) add(kv);
  }
  if (!vars.contains("PATH")) add("PATH=/usr/local/bin:/usr/bin:/bin");
  add("HOME=" + account.home);
  add("USER=" + account.name);
  add("LOGNAME=" + account.name);
  add("SHELL=" + (account.shell.empty() ? std::string("/bin/sh") : account.shell));
  for (const auto& kv : overrides) add(kv);
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (auto& [name, kv] : vars) out.push_back(std::move(kv));
  return out;
}

std::vector<std::string> AgentEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

}  // namespace podsched::agent
