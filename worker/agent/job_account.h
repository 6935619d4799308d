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
};

struct JobAccountPolicy {
  bool jobs_as_agent_user = false;
  bool allow_root = false;
  uid_t min_uid = 1000;  // Debian's first uid of a person (SYS_UID_MAX is 999)
};

// The account a job runs as, given the account the Launch names (`wanted`, already looked up)
// and the agent's own (`agent`). Errors (kPermissionDenied) say why and what to change.
Result<JobAccount> CheckJobAccount(const JobAccount& wanted, const JobAccount& agent,
                                   const JobAccountPolicy& policy);

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
