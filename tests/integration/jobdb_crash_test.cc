// SIGKILL recovery: 100 times, a child process commits acknowledged submissions in a loop
// (jobdb_crash_writer) and is killed after a random number of acknowledgements; the database
// then passes `PRAGMA integrity_check` and holds every acknowledged submission, intact.
//
// One database is shared by all rounds, so each round also recovers the WAL of the previous
// kill and continues on top of it. Round 0 may be killed while the schema is being created.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <set>
#include <string>

#include "common/check.h"
#include "store/jobdb/sqlite_job_repository.h"
#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

constexpr int kRounds = 100;
constexpr int kMaxAcks = 20;

struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of the child's stdout
};

Child Spawn(const std::string& db) {
  int fds[2];
  PODSCHED_CHECK(pipe(fds) == 0);
  const pid_t pid = fork();
  PODSCHED_CHECK(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(JOBDB_CRASH_WRITER, JOBDB_CRASH_WRITER, db.c_str(), "4", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

// Reads complete lines from `fd` into `acked` until `want` lines were read (want < 0: to EOF).
// Returns false on EOF before `want`.
bool ReadAcks(int fd, int want, std::string& buffer, std::set<int64_t>& acked) {
  if (want == 0) return true;
  int got = 0;
  char chunk[4096];
  for (;;) {
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      acked.insert(std::stoll(buffer.substr(0, nl)));
      buffer.erase(0, nl + 1);
      if (++got == want) return true;
    }
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return want < 0;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

TEST(JobDbCrashTest, EveryAcknowledgedSubmissionSurvivesSigkill) {
  testing::TempDir dir;
  const std::string db = dir.File("jobs.db");
  std::mt19937_64 rng(20261202);
  std::set<int64_t> acked;
  int64_t kills_before_first_ack = 0;
  for (int round = 0; round < kRounds; ++round) {
    const int want = static_cast<int>(rng() % (kMaxAcks + 1));
    Child child = Spawn(db);
    std::string buffer;
    const size_t before = acked.size();
    const bool reached = ReadAcks(child.out, want, buffer, acked);
    kill(child.pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child.pid, &status, 0), child.pid);
    // Lines already in the pipe were acknowledged before the kill: they count too.
    ReadAcks(child.out, -1, buffer, acked);
    close(child.out);
    ASSERT_TRUE(reached) << "round " << round << ": the writer exited early (status " << status
                         << ")";
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "round " << round;
    if (want == 0) ++kills_before_first_ack;
    ASSERT_GE(acked.size(), before + static_cast<size_t>(want));

    auto repo = SqliteJobRepository::Open(db);
    ASSERT_TRUE(repo.has_value()) << "round " << round << ": " << repo.error().ToString();
    auto check = (*repo)->IntegrityCheck();
    ASSERT_TRUE(check.has_value()) << check.error().ToString();
    ASSERT_EQ(*check, "ok") << "round " << round;
    auto state = (*repo)->Load();
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    std::set<int64_t> stored;
    for (const core::JobRecord& job : state->jobs) {
      ASSERT_EQ(job, testing::FullJob(job.id.value())) << "round " << round;
      stored.insert(job.id.value());
    }
    for (int64_t id : acked) {
      ASSERT_TRUE(stored.contains(id))
          << "round " << round << ": acknowledged job " << id << " is missing after SIGKILL";
    }
  }
  EXPECT_GT(acked.size(), static_cast<size_t>(kRounds));
  RecordProperty("acknowledged", static_cast<int>(acked.size()));
  RecordProperty("kills_before_first_ack", static_cast<int>(kills_before_first_ack));
}

}  // namespace
}  // namespace podsched::jobdb
