#include "worker/agent/job_account.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace podsched::agent {
namespace {

JobAccount Account(std::string name, uid_t uid) {
  JobAccount a;
  a.name = std::move(name);
  a.uid = uid;
  a.gid = uid;
  a.groups = {uid};
  a.home = "/home/" + a.name;
  a.shell = "/bin/bash";
  return a;
}

const JobAccount kRoot = Account("root", 0);
const JobAccount kAlice = Account("alice", 1001);
const JobAccount kBob = Account("bob", 1002);
const JobAccount kDaemon = Account("daemon", 1);

TEST(JobAccountTest, RootAgentRunsEachJobAsItsUser) {
  auto a = CheckJobAccount(kAlice, kRoot, {});
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  EXPECT_EQ(a->uid, 1001u);
  EXPECT_EQ(CheckJobAccount(kBob, kRoot, {})->name, "bob");
}

TEST(JobAccountTest, RootAndSystemAccountsAreRefusedUnlessAllowed) {
  auto root = CheckJobAccount(kRoot, kRoot, {});
  ASSERT_FALSE(root.has_value());
  EXPECT_EQ(root.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(root.error().message().find("--allow-root-jobs"), std::string::npos);
  EXPECT_TRUE(CheckJobAccount(kRoot, kRoot, {.allow_root = true}).has_value());

  auto system = CheckJobAccount(kDaemon, kRoot, {});
  ASSERT_FALSE(system.has_value());
  EXPECT_NE(system.error().message().find("system account"), std::string::npos);
  EXPECT_TRUE(CheckJobAccount(kDaemon, kRoot, {.min_uid = 1}).has_value());
}

// Audit L10: accounts that are not a person's pass the uid checks but are refused, saying why;
// the agent's own account (whoever started it chose it) is not judged.
TEST(JobAccountTest, NobodyNoLoginAndExpiredAccountsAreRefused) {
  JobAccount nobody = Account("nobody", kOverflowUid);
  nobody.shell = "/bin/sh";
  auto refused = CheckJobAccount(nobody, kRoot, {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.error().message().find("overflow account"), std::string::npos);

  for (const char* shell : {"/usr/sbin/nologin", "/sbin/nologin", "/bin/false"}) {
    JobAccount svc = Account("svc", 1500);
    svc.shell = shell;
    auto r = CheckJobAccount(svc, kRoot, {});
    ASSERT_FALSE(r.has_value()) << shell;
    EXPECT_NE(r.error().message().find("refuses logins"), std::string::npos) << shell;
  }
  JobAccount gone = kAlice;
  gone.expired = true;
  auto expired = CheckJobAccount(gone, kRoot, {});
  ASSERT_FALSE(expired.has_value());
  EXPECT_NE(expired.error().message().find("has expired"), std::string::npos);

  // The agent's own account, e.g. a service account with nologin running podworker unprivileged.
  JobAccount agent = Account("podworker", 1600);
  agent.shell = "/usr/sbin/nologin";
  EXPECT_TRUE(CheckJobAccount(agent, agent, {}).has_value());
  EXPECT_TRUE(CheckJobAccount(kAlice, agent, {.jobs_as_agent_user = true}).has_value());
  EXPECT_TRUE(CheckJobAccount(kAlice, kRoot, {}).has_value());  // a person's account still runs
}

// Audit M6: a privileged group of the account never reaches its jobs.
TEST(JobAccountTest, DeniedGroupsAreDroppedAndRefuseAsPrimaryGroup) {
  JobAccount alice = kAlice;
  alice.groups = {1001, 27, 50100, 999};  // its own, sudo, research, docker
  const JobAccountPolicy policy{.denied_groups = {27, 999}};
  auto runs = CheckJobAccount(alice, kRoot, policy);
  ASSERT_TRUE(runs.has_value()) << runs.error().ToString();
  EXPECT_EQ(runs->groups, (std::vector<gid_t>{1001, 50100}));
  JobAccount sudoer = kBob;
  sudoer.gid = 27;
  auto refused = CheckJobAccount(sudoer, kRoot, policy);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("privileged primary group 27"), std::string::npos);
  EXPECT_FALSE(GroupIds({"root", "no-such-group-here"}).empty());  // root exists; the other not
  EXPECT_EQ(GroupIds({"no-such-group-here"}).size(), 0u);
}

TEST(JobAccountTest, UnprivilegedAgentRunsOnlyItsOwnAccountsJobs) {
  EXPECT_TRUE(CheckJobAccount(kAlice, kAlice, {}).has_value());
  auto other = CheckJobAccount(kBob, kAlice, {});
  ASSERT_FALSE(other.has_value());
  EXPECT_NE(other.error().message().find("without root"), std::string::npos);
  // A service account (uid below min_uid) may still run jobs as itself.
  EXPECT_TRUE(CheckJobAccount(kDaemon, kDaemon, {}).has_value());
}

TEST(JobAccountTest, JobsAsAgentUserRunsEveryJobAsTheAgent) {
  EXPECT_EQ(CheckJobAccount(kBob, kAlice, {.jobs_as_agent_user = true})->name, "alice");
  EXPECT_FALSE(CheckJobAccount(kBob, kRoot, {.jobs_as_agent_user = true}).has_value());
  EXPECT_EQ(CheckJobAccount(kBob, kRoot, {.jobs_as_agent_user = true, .allow_root = true})->uid,
            0u);
  EXPECT_FALSE(CheckAgentPolicy({.jobs_as_agent_user = true}, 0).ok());
  EXPECT_TRUE(CheckAgentPolicy({.jobs_as_agent_user = true}, 1000).ok());
  EXPECT_TRUE(CheckAgentPolicy({}, 0).ok());
}

TEST(JobAccountTest, JobEnvironmentKeepsNothingOfTheAgentButWhatIsPassed) {
  const std::vector<std::string> agent = {
      "PATH=/opt/bin:/usr/bin",    "LANG=C.UTF-8",          "LC_ALL=C",
      "OMPI_MCA_btl=self,tcp",     "SECRET_TOKEN=s3cr3t",   "HOME=/root",
      "AWS_ACCESS_KEY_ID=ak",      "PODWORKER_KEY=/etc/key", "USER=root"};
  auto env = JobEnvironment(kAlice, agent, {"AWS_ACCESS_KEY_ID"}, {"FOO=bar", "TMPDIR=/s"});
  auto has = [&](const std::string& kv) { return std::find(env.begin(), env.end(), kv) != env.end(); };
  EXPECT_TRUE(has("PATH=/opt/bin:/usr/bin"));
  EXPECT_TRUE(has("LANG=C.UTF-8"));
  EXPECT_TRUE(has("LC_ALL=C"));
  EXPECT_TRUE(has("OMPI_MCA_btl=self,tcp"));
  EXPECT_TRUE(has("AWS_ACCESS_KEY_ID=ak"));
  EXPECT_TRUE(has("HOME=/home/alice"));
  EXPECT_TRUE(has("USER=alice"));
  EXPECT_TRUE(has("LOGNAME=alice"));
  EXPECT_TRUE(has("SHELL=/bin/bash"));
  EXPECT_TRUE(has("FOO=bar"));
  EXPECT_TRUE(has("TMPDIR=/s"));
  for (const auto& kv : env) {
    EXPECT_EQ(kv.find("SECRET"), std::string::npos) << kv;
    EXPECT_EQ(kv.find("PODWORKER_KEY"), std::string::npos) << kv;
  }
  EXPECT_EQ(env.size(), 11u);
}

TEST(JobAccountTest, JobEnvironmentHasAPathEvenWhenTheAgentHasNone) {
  auto env = JobEnvironment(kAlice, {}, {}, {});
  EXPECT_NE(std::find(env.begin(), env.end(), "PATH=/usr/local/bin:/usr/bin:/bin"), env.end());
}

TEST(JobAccountTest, LooksUpThisMachinesAccounts) {
  auto root = LookUpAccount("root");
  ASSERT_TRUE(root.has_value()) << root.error().ToString();
  EXPECT_EQ(root->uid, 0u);
  EXPECT_FALSE(root->groups.empty());
  EXPECT_EQ(LookUpAccount(uid_t{0})->name, "root");
  auto none = LookUpAccount("no-such-podsched-user");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace podsched::agent
