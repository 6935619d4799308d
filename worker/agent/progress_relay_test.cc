// Progress reports as the agent relays them: the launch's epoch always, the newest checkpoint
// step carried on, and which output lines are reports.
#include "worker/agent/progress_relay.h"

#include <gtest/gtest.h>

#include "common/rank_tag.h"
#include "worker/agent/exit_verdict.h"

namespace podsched::agent {
namespace {

TEST(ProgressRelayTest, TheEnvelopeCarriesTheLaunchsEpochAndTheNewestCheckpoint) {
  progress::Progress p;
  p.job = "12";
  p.epoch = 99;  // a report never chooses the epoch
  p.step = 40;
  p.steps = 200;
  p.loss = 0.5;
  p.checkpoint = "ckpt-3-40";
  p.scalars["lr"] = 0.1;
  int64_t last = 20;
  bus::Envelope env = ProgressEnvelope(JobEpoch{JobId(12), 3}, p, &last);
  ASSERT_TRUE(env.has_progress());
  EXPECT_EQ(env.progress().job().job_id(), 12);
  EXPECT_EQ(env.progress().job().epoch(), 3);
  EXPECT_EQ(env.progress().step(), 40);
  EXPECT_EQ(env.progress().total_steps(), 200);
  EXPECT_EQ(env.progress().last_checkpoint_step(), 40);
  EXPECT_EQ(env.progress().scalars().at("lr"), 0.1);
  EXPECT_EQ(last, 40);

  progress::Progress later = p;  // no checkpoint in this report: the last one stays
  later.step = 45;
  later.checkpoint.clear();
  EXPECT_EQ(ProgressEnvelope(JobEpoch{JobId(12), 3}, later, &last).progress().last_checkpoint_step(),
            40);
}

// The datagram port is reachable from the network: a report is forwarded only for a launch that
// runs here, and only with that launch's key.
TEST(ProgressRelayTest, ADatagramIsForwardedOnlyForALaunchHereWithItsKey) {
  progress::Progress p;
  p.job = "12";
  p.epoch = 3;
  p.key = "k1";
  const std::string key = "k1";
  EXPECT_FALSE(CheckProgressDatagram(p, &key).has_value());
  auto other = CheckProgressDatagram(p, nullptr);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->reason, "progress_other_job");
  EXPECT_EQ(other->message, "progress of job '12' epoch 3 does not run here");
  p.key = "k2";
  auto bad = CheckProgressDatagram(p, &key);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->reason, "progress_bad_key");
  p.key.clear();
  EXPECT_EQ(CheckProgressDatagram(p, &key)->reason, "progress_bad_key");
  p.job = std::string(1000, '9');
  EXPECT_LT(CheckProgressDatagram(p, nullptr)->message.size(), 100u) << "a long name is cut";
}

TEST(ProgressRelayTest, OnlyRankZerosStdoutProgressLinesAreReportsAndMpirunsNoiseGoes) {
  const std::string line = "POD_PROGRESS step=7 loss=0.5";
  OutputLine report = JudgeOutputLine(FormatRankTag(0, false) + line);
  EXPECT_TRUE(report.keep) << "a report stays in the log too";
  ASSERT_TRUE(report.progress.has_value());
  ASSERT_TRUE(report.progress->has_value()) << report.progress->error().ToString();
  EXPECT_EQ((*report.progress)->step, 7);

  EXPECT_FALSE(JudgeOutputLine(FormatRankTag(1, false) + line).progress.has_value());
  EXPECT_FALSE(JudgeOutputLine(FormatRankTag(0, true) + line).progress.has_value());
  EXPECT_FALSE(JudgeOutputLine(line).progress.has_value()) << "untagged: not a rank's";

  OutputLine bad = JudgeOutputLine(FormatRankTag(0, false) + "POD_PROGRESS step=x");
  ASSERT_TRUE(bad.progress.has_value());
  EXPECT_FALSE(bad.progress->has_value()) << "a malformed report is said to be one";

  OutputLine noise = JudgeOutputLine(
      "[h1:01234] [[1234,0],1] plm:rsh: Warning: setpgid(1234,1234) failed in parent");
  EXPECT_FALSE(noise.keep);
  EXPECT_TRUE(JudgeOutputLine("an ordinary line").keep);
}

TEST(ProgressRelayTest, ARanksPreemptedLineIsSeenOnItsStderrOnly) {
  const OutputLine line = JudgeOutputLine(FormatRankTag(3, true) + kRankPreemptedLine);
  EXPECT_TRUE(line.rank_preempted);
  EXPECT_TRUE(line.keep) << "it stays in the log";
  // After an unfinished line of the program, which the rank's line joiner put in front of it.
  EXPECT_TRUE(JudgeOutputLine(FormatRankTag(0, true) + "saving" + kRankPreemptedLine)
                  .rank_preempted);
  EXPECT_FALSE(JudgeOutputLine(FormatRankTag(3, false) + kRankPreemptedLine).rank_preempted);
  EXPECT_FALSE(JudgeOutputLine(kRankPreemptedLine).rank_preempted) << "untagged: mpirun's own";
  EXPECT_FALSE(JudgeOutputLine(FormatRankTag(3, true) + kRankPreemptedLine + " and more")
                   .rank_preempted);
}

}  // namespace
}  // namespace podsched::agent
