// Whose Unix account runs a job's processes (docs/podworker.md, "Jobs run as their user").
//
// Every process the agent starts for a job (mpirun or `podworker launch` on the launcher host,
// what each rsh request runs on every host) runs with the job's account: its uid, primary gid
// and supplementary groups, its home as working directory, and a clean environment (the agent's
// own variables do not reach jobs, apart from the few JobEnvironment passes).
//
// Three ways an agent runs jobs:
// - as root, each job as the Unix account of the user who submitted it (Launch.unix_user,
//   looked up on this machine). uid 0 is refused unless allow_root, accounts below min_uid
//   (system accounts) unless min_uid is lowered: both are explicit choices of the admin;
// - without root, only jobs whose account is the agent's own: any other is refused, since the
//   agent cannot switch to it;
// - with jobs_as_agent_user, every job as the agent's own account, whoever submitted it (one
//   user's machine, tests). As root this still needs allow_root.
//
// CheckJobAccount and JobEnvironment are pure; LookUpAccount reads the passwd and group
// databases (NSS).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

struct JobAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, the primary one included
  std::string home;
  std::string shell;
  // Its shadow entry's expiry date has passed (`usermod --expiredate`, what locks an account
  // for every way in); read only by a root agent. A password locked with "!" is not expiry:
  // accounts that log in with keys alone have one.
  bool expired = false;
};

// The kernel's overflow uid: `nobody`, which NFS and unrelated daemons share.
inline constexpr uid_t kOverflowUid = 65534;

// Groups that grant root or its equivalent (sudo, the docker socket, raw disks, the system's
// logs and /usr/local in root's PATH): a job never runs with them (audit M6: the API admin who
// maps a user to an account would otherwise hand its jobs every group of that account).
inline constexpr const char* kDefaultDeniedJobGroups[] = {
    "root", "sudo", "wheel", "adm", "docker", "lxd", "incus-admin", "libvirt", "disk", "shadow",
    "systemd-journal", "staff"};

struct JobAccountPolicy {
  bool jobs_as_agent_user = false;
  bool allow_root = false;
  uid_t min_uid = 1000;  // Debian's first uid of a person (SYS_UID_MAX is 999)
  // Never a job's supplementary group (dropped), nor its primary one (refused); the agent's own
  // account is not judged. podworker fills it from --deny-job-groups.
  std::vector<gid_t> denied_groups{};
};

// The account a job runs as, given the account the Launch names (`wanted`, already looked up)
// and the agent's own (`agent`). Errors (kPermissionDenied) say why and what to change.
// Besides root and system accounts, an account other than the agent's own is refused when it is
// `nobody` (the overflow uid 65534, shared by unrelated daemons), has a shell that refuses
// logins (nologin, false) or has expired (audit L10): each says the account is not a person's.
// A denied group (policy.denied_groups) is dropped from the groups, or refuses the account
// when it is the primary group.
Result<JobAccount> CheckJobAccount(const JobAccount& wanted, const JobAccount& agent,
                                   const JobAccountPolicy& policy);

// The gids of the groups named (those that exist here; the others are skipped).
std::vector<gid_t> GroupIds(const std::vector<std::string>& names);

// Reads the account `name` (passwd, then its groups). kNotFound when there is none.
Result<JobAccount> LookUpAccount(const std::string& name);
// The account of `uid` (the agent's own, for jobs_as_agent_user).
Result<JobAccount> LookUpAccount(uid_t uid);

// The account a Launch naming `unix_user` runs as on this machine (LookUpAccount +
// CheckJobAccount). With jobs_as_agent_user the name is not looked up at all.
Result<JobAccount> ResolveJobAccount(const std::string& unix_user, const JobAccountPolicy& policy);

// Whether the agent may start it at all: the check podworker makes before it serves (a root
// agent with jobs_as_agent_user and no allow_root would run every job as root).
Status CheckAgentPolicy(const JobAccountPolicy& policy, uid_t agent_uid);

// A job process's whole environment: PATH, LANG, LANGUAGE, TZ, LC_* and the MPI tuning
// variables (OMPI_MCA_*, PMIX_MCA_*, PRTE_MCA_*) of the agent's environment `agent_env`, the
// names in `pass` (e.g. cloud credentials the admin gives jobs), HOME, USER, LOGNAME and SHELL
// of the account, then `overrides` (NAME=VALUE, the job's variables). Nothing else of the
// agent's environment: a job never sees the agent's key file path or other secrets.
std::vector<std::string> JobEnvironment(const JobAccount& account,
                                        const std::vector<std::string>& agent_env,
                                        const std::vector<std::string>& pass,
                                        const std::vector<std::string>& overrides);

// The agent's environment as NAME=VALUE strings (environ).
std::vector<std::string> AgentEnvironment();

}  // namespace podsched::agent
