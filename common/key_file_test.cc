#include "common/key_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace podsched {
namespace {

constexpr char kPub[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
constexpr char kSec[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";

TEST(KeyFileTest, RoundTripsAnEnrolledKeyFile) {
  KeyFile k{"m1", "tcp://10.0.0.10:8471", kPub, kPub, kSec};
  const std::string text = FormatKeyFile(k, "written by podsched agent enroll\nkeep it secret");
  EXPECT_TRUE(text.starts_with("# written by podsched agent enroll\n# keep it secret\n"));
  auto parsed = ParseKeyFile(text);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->agent_id, "m1");
  EXPECT_EQ(parsed->bus, "tcp://10.0.0.10:8471");
  EXPECT_EQ(parsed->server_key, kPub);
  EXPECT_EQ(parsed->secret_key, kSec);
}

TEST(KeyFileTest, AcceptsTheKeygenFormOnly) {
  auto parsed = ParseKeyFile(std::string("public-key: ") + kPub + "\r\nsecret-key: " + kSec + "\n");
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->agent_id, "");
  EXPECT_EQ(parsed->server_key, "");
}

TEST(KeyFileTest, RejectsWhatIsNotAKeyFile) {
  const std::string keys = std::string("public-key: ") + kPub + "\nsecret-key: " + kSec + "\n";
  for (const std::string& bad : {
           std::string(""),                                  // no keys
           std::string("public-key: ") + kPub + "\n",         // no secret
           keys + "server-key: short\n",                      // not Z85
           keys + "server-key: " + std::string(40, ' ') + "\n",  // not Z85 alphabet
           keys + "agent-id: a b\n",                          // bad id
           keys + "agent-id: m1\nagent-id: m2\n",             // twice
           keys + "colour: blue\n",                           // unknown
           keys + "no colon\n",
       }) {
    EXPECT_FALSE(ParseKeyFile(bad)) << bad;
  }
}

TEST(KeyFileTest, ABusRoutingIdNamesItsAgentAndIsNewEachTime) {
  const std::string a = NewBusRoutingId("m1.zone-b_2");
  const std::string b = NewBusRoutingId("m1.zone-b_2");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), std::string("m1.zone-b_2/").size() + 32);
  EXPECT_EQ(AgentIdOfRoutingId(a), "m1.zone-b_2");
  EXPECT_EQ(AgentIdOfRoutingId("m1"), "m1");  // a bare id (older agents, test harnesses)
  EXPECT_EQ(AgentIdOfRoutingId("m1/x/y"), "m1");
  EXPECT_EQ(AgentIdOfRoutingId(""), "");
}

TEST(KeyFileTest, WritePrivateFileIsOwnerOnlyAndDoesNotOverwrite) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("key-file-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "k").string();
  ASSERT_TRUE(WritePrivateFile(path, "one", false).ok());
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(WritePrivateFile(path, "two", false).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(WritePrivateFile(path, "three", true).ok());
  std::ifstream in(path);
  std::string got;
  std::getline(in, got);
  EXPECT_EQ(got, "three");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);  // no temporary left
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podsched
