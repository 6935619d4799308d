// podctl's account helpers: --expires, the config file login writes (path, mode, atomic, other
// keys kept) and the user and token tables.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "scheduler/ctl/admin_commands.h"
#include "scheduler/ctl/client_config.h"

namespace podsched::ctl {
namespace {
namespace fs = std::filesystem;

int ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

TEST(ParseExpiryTest, UnitsNeverAndBounds) {
  EXPECT_EQ(ParseExpiry("never").value(), 0);
  EXPECT_EQ(ParseExpiry("90m").value(), 5400);
  EXPECT_EQ(ParseExpiry("12h").value(), 43200);
  EXPECT_EQ(ParseExpiry("30d").value(), 30 * 86400);
  EXPECT_EQ(ParseExpiry("1w").value(), 7 * 86400);
  EXPECT_EQ(ParseExpiry("60s").value(), 60);
  for (const char* bad : {"", "30", "d", "-1d", "0d", "1.5d", "30 d", "30days", "1y"}) {
    auto r = ParseExpiry(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("30d"), std::string::npos) << r.error().message();
  }
  for (const char* out_of_range : {"59s", "3651d", "99999999999999999w"}) {
    EXPECT_FALSE(ParseExpiry(out_of_range).has_value()) << out_of_range;
  }
}

class ClientConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("podctl-config-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (const char* x = std::getenv("XDG_CONFIG_HOME")) saved_xdg_ = x;
  }
  void TearDown() override {
    if (saved_xdg_) {
      ::setenv("XDG_CONFIG_HOME", saved_xdg_->c_str(), 1);
    } else {
      ::unsetenv("XDG_CONFIG_HOME");
    }
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::optional<std::string> saved_xdg_;
};

TEST_F(ClientConfigTest, HonoursXdgConfigHome) {
  ::setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
  EXPECT_EQ(ClientConfigPath(), (dir_ / "podctl/config.yaml").string());
  ::setenv("XDG_CONFIG_HOME", "relative/dir", 1);  // not absolute: ignored (XDG spec)
  EXPECT_TRUE(ClientConfigPath().ends_with("/.config/podctl/config.yaml"));
}

TEST_F(ClientConfigTest, WritesMode0600InA0700DirectoryAndKeepsOtherKeys) {
  const fs::path file = dir_ / "podctl" / "config.yaml";
  ASSERT_TRUE(WriteClientConfig(file.string(), {"http://a:1", "tok-1"}).ok());
  EXPECT_EQ(ModeOf(file), 0600);
  EXPECT_EQ(ModeOf(file.parent_path()), 0700);
  auto read = ReadClientConfig(file.string());
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->server, "http://a:1");
  EXPECT_EQ(read->token, "tok-1");

  std::ofstream(file, std::ios::app) << "color: false\n";
  ::chmod(file.c_str(), 0644);
  ASSERT_TRUE(WriteClientConfig(file.string(), {"http://b:2", "tok-2"}).ok());
  EXPECT_EQ(ModeOf(file), 0600);  // a fresh file, not the old one rewritten
  read = ReadClientConfig(file.string());
  EXPECT_EQ(read->token, "tok-2");
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("color: false"), std::string::npos) << text;
  int entries = 0;
  for (const auto& e : fs::directory_iterator(file.parent_path())) entries += e.exists();
  EXPECT_EQ(entries, 1);  // no temp file left behind

  EXPECT_TRUE(ReadClientConfig((dir_ / "missing.yaml").string())->token.empty());
  std::ofstream(dir_ / "bad.yaml") << "server: [1,\n";
  EXPECT_FALSE(ReadClientConfig((dir_ / "bad.yaml").string()).has_value());
  EXPECT_FALSE(WriteClientConfig("", {"s", "t"}).ok());
}

TEST(AccountTablesTest, OneRowEachAndNoSecrets) {
  api::UserList users;
  auto* u = users.add_users();
  u->set_name("bob");
  u->set_role("user");
  u->set_source("api");
  u->set_disabled(true);
  u->set_unix_user("bob_u");
  std::string t = UsersTable(users);
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 2);
  EXPECT_NE(t.find("disabled"), std::string::npos) << t;
  EXPECT_NE(t.find("bob_u"), std::string::npos) << t;
  api::TokenList tokens;
  auto* k = tokens.add_tokens();
  k->set_id(7);
  k->set_user("bob");
  k->set_label("lap\x1btop");
  k->set_state("revoked");
  std::string kt = TokensTable(tokens);
  EXPECT_NE(kt.find("revoked"), std::string::npos) << kt;
  EXPECT_NE(kt.find("never"), std::string::npos) << kt;
  EXPECT_EQ(kt.find('\x1b'), std::string::npos) << kt;  // a label cannot drive the terminal
}

}  // namespace
}  // namespace podsched::ctl
