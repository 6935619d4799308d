// The /proc parsers on the texts a job can shape (its name, its environment, its tag).
#include "worker/agent/proc_text.h"

#include <gtest/gtest.h>

#include <string>

namespace podsched::agent {
namespace {

// /proc/PID/stat of a process named `comm` with ppid 7 and start time 12345 (field 22).
std::string Stat(const std::string& comm, const std::string& state = "S") {
  std::string s = "42 (" + comm + ") " + state + " 7";
  for (int field = 5; field <= 21; ++field) s += " " + std::to_string(field);
  return s + " 12345 0 0 0\n";
}

TEST(ProcTextTest, StatWithAnyProcessName) {
  for (const std::string comm : {"python3", "a b", "x) (y", ")) 9 9 9", ""}) {
    auto info = ParseProcStat(Stat(comm), 42);
    ASSERT_TRUE(info.has_value()) << comm;
    EXPECT_EQ(info->comm, comm);
    EXPECT_EQ(info->ppid, 7);
    EXPECT_EQ(info->start_time, 12345u);
    EXPECT_FALSE(info->zombie);
  }
  EXPECT_TRUE(ParseProcStat(Stat("z", "Z"), 1)->zombie);
}

// Before: `std::stol` and `substr(close + 2)` threw on these, in a root agent.
TEST(ProcTextTest, MalformedStatIsNulloptNeverAThrow) {
  for (const std::string& bad :
       {std::string(""), std::string("42 (x)"), std::string("42 (x"), std::string("42 x) ("),
        std::string("42 (x) S notanumber 5"), Stat("x").substr(0, 30),
        std::string("42 (x) S 99999999999999999999 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18")}) {
    EXPECT_FALSE(ParseProcStat(bad, 42).has_value()) << bad;
  }
}

TEST(ProcTextTest, RealUidOfStatus) {
  EXPECT_EQ(StatusRealUid("Name:\tx\nUid:\t1001\t0\t0\t0\nGid:\t1\n"), 1001u);
  EXPECT_EQ(StatusRealUid("Uid: 0 1001 1001 1001\n"), 0u);  // the real one, not the effective
  EXPECT_FALSE(StatusRealUid("Name:\tx\n").has_value());
  EXPECT_FALSE(StatusRealUid("Uid:\tabc\t0\n").has_value());
  EXPECT_FALSE(StatusRealUid("Uid:\t99999999999\n").has_value());
}

TEST(ProcTextTest, SignalMasks) {
  const std::string status = "Name:\tx\nSigIgn:\t0000000000000001\nSigCgt:\t0000000000004000\n";
  EXPECT_TRUE(StatusHandlesSignal(status, 1));    // SIGHUP ignored
  EXPECT_TRUE(StatusHandlesSignal(status, 15));   // SIGTERM caught (bit 14)
  EXPECT_FALSE(StatusHandlesSignal(status, 2));
  EXPECT_FALSE(StatusHandlesSignal("SigCgt:\tzz\n", 15));
  EXPECT_FALSE(StatusHandlesSignal("SigCgt:\t" + std::string(40, 'f') + "\n", 15));
  EXPECT_FALSE(StatusHandlesSignal(status, 0));
  EXPECT_FALSE(StatusHandlesSignal(status, 65));
}

TEST(ProcTextTest, EnvironLookup) {
  const std::string env("A=1\0PODWORKER_TAG=3:1:0\0PODWORKER_TAGX=no\0B=\0", 45);
  EXPECT_EQ(FindEnvVar(env, "PODWORKER_TAG"), "3:1:0");
  EXPECT_EQ(FindEnvVar(env, "B"), "");
  EXPECT_EQ(FindEnvVar(env, "C"), std::nullopt);
  EXPECT_EQ(FindEnvVar(std::string_view("PODWORKER_TAG", 13), "PODWORKER_TAG"), std::nullopt);
}

// A job sets its own PODWORKER_TAG: sscanf's %d on 99999999999 was undefined behaviour.
TEST(ProcTextTest, TagsRoundTripAndOutOfRangeNumbersAreRefused) {
  JobEpoch je;
  int32_t host = 0;
  int rank = 0;
  ASSERT_TRUE(ParseTag(TagValue({JobId(12), 3}, 5), je, host, &rank));
  EXPECT_EQ(je, (JobEpoch{JobId(12), 3}));
  EXPECT_EQ(host, 5);
  EXPECT_EQ(rank, -1);
  ASSERT_TRUE(ParseTag("12:3:5:7", je, host, &rank));
  EXPECT_EQ(rank, 7);
  for (const char* bad : {"", "1:2", "1:2:3:4:5", "1:2:99999999999", "1:2:3:99999999999",
                          "1:2:3:-1", "a:2:3", "1:2:3 ", "1::3", "99999999999999999999:1:1"}) {
    EXPECT_FALSE(ParseTag(bad, je, host, &rank)) << bad;
  }
}

}  // namespace
}  // namespace podsched::agent
