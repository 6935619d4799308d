#include "scheduler/daemon/agent_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace podsched::daemon {
namespace {

// Distinct valid Z85 keys: 40 characters from the alphabet, the counter spelled in digits.
KeyGenerator FakeKeys() {
  auto n = std::make_shared<int>(0);
  return [n]() -> Result<KeyFile> {
    ++*n;
    std::string digits = std::to_string(*n);
    KeyFile k;
    k.public_key = std::string(40 - digits.size(), 'P') + digits;
    k.secret_key = std::string(40 - digits.size(), 'S') + digits;
    return k;
  };
}

class AgentKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("agent-keys-test-" + std::to_string(getpid()))).string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  KeyGenerator keygen_ = FakeKeys();
};

// Audit M8: root enrolling in the data dir of podsched's own account wrote a root-owned 0600
// agents.keys the daemon could not read. Now refused, naming the account to run it as.
TEST_F(AgentKeysTest, EnrolAndRevokeOnlyAsTheDataDirsOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "handing the directory to another account needs root";
  ASSERT_TRUE(EnrollAgent(dir_, "m1", "tcp://h:1", keygen_).has_value());
  ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  auto refused = EnrollAgent(dir_, "m2", "tcp://h:1", keygen_);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("runuser -u nobody"), std::string::npos)
      << refused.error().message();
  Status revoke = RevokeAgent(dir_, "m1");
  EXPECT_EQ(revoke.code(), StatusCode::kFailedPrecondition) << revoke.ToString();
  auto agents = ReadAgentKeys(AgentKeysPath(dir_));
  ASSERT_TRUE(agents.has_value());
  EXPECT_EQ(agents->size(), 1u) << "nothing was written";
  ASSERT_EQ(::chown(dir_.c_str(), 0, 0), 0);
  EXPECT_TRUE(RevokeAgent(dir_, "m1").ok());
}

TEST_F(AgentKeysTest, ServerKeyIsCreatedOnceWithMode0600) {
  bool created = false;
  auto first = LoadOrCreateServerKey(dir_, keygen_, &created);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_TRUE(created);
  auto again = LoadOrCreateServerKey(dir_, keygen_, &created);
  ASSERT_TRUE(again);
  EXPECT_FALSE(created);
  EXPECT_EQ(again->secret_key, first->secret_key);
  struct stat st{};
  ASSERT_EQ(stat(ServerKeyPath(dir_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(AgentKeysTest, EnrolBindsOneKeyToOneIdAndRevokeRemovesIt) {
  auto m1 = EnrollAgent(dir_, "m1", "tcp://10.0.0.10:8471", keygen_);
  ASSERT_TRUE(m1) << m1.error().message();
  bool created = true;
  auto server = LoadOrCreateServerKey(dir_, keygen_, &created);
  EXPECT_FALSE(created);  // enrolment made the server key
  EXPECT_EQ(m1->agent_id, "m1");
  EXPECT_EQ(m1->bus, "tcp://10.0.0.10:8471");
  EXPECT_EQ(m1->server_key, server->public_key);
  EXPECT_NE(m1->public_key, server->public_key);
  ASSERT_TRUE(EnrollAgent(dir_, "m2", "tcp://x:1", keygen_));
  EXPECT_EQ(EnrollAgent(dir_, "m1", "tcp://x:1", keygen_).error().code(),
            StatusCode::kAlreadyExists);
  EXPECT_FALSE(EnrollAgent(dir_, "bad id", "tcp://x:1", keygen_));

  auto agents = ReadAgentKeys(AgentKeysPath(dir_));
  ASSERT_TRUE(agents);
  ASSERT_EQ(agents->size(), 2u);
  EXPECT_EQ((*agents)[0].agent_id, "m1");
  EXPECT_EQ((*agents)[0].public_key, m1->public_key);
  struct stat st{};
  ASSERT_EQ(stat(AgentKeysPath(dir_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  ASSERT_TRUE(RevokeAgent(dir_, "m1").ok());
  EXPECT_EQ(RevokeAgent(dir_, "m1").code(), StatusCode::kNotFound);
  agents = ReadAgentKeys(AgentKeysPath(dir_));
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].agent_id, "m2");
  EXPECT_TRUE(EnrollAgent(dir_, "m1", "tcp://x:1", keygen_));  // a new key after revocation
}

TEST(AgentKeysParseTest, RoundTripsAndRejectsDuplicates) {
  const std::string k1(40, 'a'), k2(40, 'b');
  auto parsed = ParseAgentKeys(FormatAgentKeys({{"m1", k1, {}}, {"m2", k2, {}}}));
  ASSERT_TRUE(parsed) << parsed.error().message();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].public_key, k2);
  EXPECT_TRUE(ParseAgentKeys("").value().empty());
  for (const std::string& bad : {"m1 " + k1 + "\nm1 " + k2, "m1 " + k1 + "\nm2 " + k1,
                                 std::string("m1"), std::string("m1 short"), "a/b " + k1}) {
    EXPECT_FALSE(ParseAgentKeys(bad)) << bad;
  }
}

// Audit H6: the hosts an agent may register are recorded at enrolment, read back sorted, and a
// line from before (no HOSTS) means any host.
TEST_F(AgentKeysTest, EnrolmentRecordsTheAgentsHosts) {
  ASSERT_TRUE(EnrollAgent(dir_, "m1", "tcp://x:1", keygen_, std::vector<int32_t>{3, 0, 1, 2}));
  ASSERT_TRUE(EnrollAgent(dir_, "m2", "tcp://x:1", keygen_));
  EXPECT_FALSE(EnrollAgent(dir_, "m3", "tcp://x:1", keygen_, std::vector<int32_t>{}));
  auto agents = ReadAgentKeys(AgentKeysPath(dir_));
  ASSERT_TRUE(agents) << agents.error().message();
  ASSERT_EQ(agents->size(), 2u);
  EXPECT_EQ((*agents)[0].hosts, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ((*agents)[1].hosts, std::nullopt);
}

// On a fleet every pod has a host 0: an enrolment binds the hosts to their pod ("dev-007:0").
TEST_F(AgentKeysTest, EnrolmentOnAFleetBindsTheHostsToTheirPod) {
  ASSERT_TRUE(EnrollAgent(dir_, "d7", "tcp://x:1", keygen_, std::vector<int32_t>{0}, "dev-007"));
  EXPECT_FALSE(EnrollAgent(dir_, "d8", "tcp://x:1", keygen_, std::nullopt, "dev-008"))
      << "a pod without hosts binds nothing";
  EXPECT_FALSE(EnrollAgent(dir_, "d9", "tcp://x:1", keygen_, std::vector<int32_t>{0}, "a b"));
  auto agents = ReadAgentKeys(AgentKeysPath(dir_));
  ASSERT_TRUE(agents) << agents.error().message();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].pod, "dev-007");
  EXPECT_EQ((*agents)[0].hosts, std::vector<int32_t>{0});
  const std::string k(40, 'c');
  EXPECT_NE(FormatAgentKeys({{"d7", k, std::vector<int32_t>{0, 1}, "dev-007"}}).find(" dev-007:0-1\n"),
            std::string::npos);
}

TEST(AgentKeysParseTest, HostsRoundTripAndABadHostsFieldNamesTheLine) {
  const std::string k1(40, 'a'), k2(40, 'b');
  const std::string text = FormatAgentKeys({{"m1", k1, std::vector<int32_t>{0, 1, 2, 3, 12}, ""},
                                            {"m2", k2, std::nullopt, ""}});
  EXPECT_NE(text.find("m1 " + k1 + " 0-3,12\n"), std::string::npos) << text;
  auto parsed = ParseAgentKeys(text);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ((*parsed)[0].hosts, (std::vector<int32_t>{0, 1, 2, 3, 12}));
  EXPECT_EQ((*parsed)[1].hosts, std::nullopt);
  for (const std::string& bad : {"m1 " + k1 + " 7-3", "m1 " + k1 + " 0-3 extra", "m1 " + k1 + " ",
                                 "m1 " + k1 + " :0", "m1 " + k1 + " a/b:0", "m1 " + k1 + " dev:"}) {
    auto r = ParseAgentKeys(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("agents.keys line 1"), std::string::npos)
        << r.error().message();
  }
}

}  // namespace
}  // namespace podsched::daemon
