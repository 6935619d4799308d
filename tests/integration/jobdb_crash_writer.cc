// jobdb_crash_writer: the victim of the SIGKILL recovery test (jobdb_recovery_test).
//
// Opens the job database, then commits submissions forever from several threads through a
// GroupCommitter and prints each job id on stdout, one line per write(2), only after its commit
// was acknowledged. The parent kills it at a random point and checks that every printed id is
// in the database.   usage: jobdb_crash_writer DB_PATH [THREADS]
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "store/jobdb/group_committer.h"
#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

int Run(const std::string& path, int threads) {
  auto repo = SqliteJobRepository::Open(path);
  if (!repo) {
    std::fprintf(stderr, "jobdb_crash_writer: %s\n", repo.error().ToString().c_str());
    return 1;
  }
  GroupCommitter committer(std::move(*repo));
  auto state = committer.Load();
  if (!state) {
    std::fprintf(stderr, "jobdb_crash_writer: %s\n", state.error().ToString().c_str());
    return 1;
  }
  // Job ids and event seqs come from one counter, so both stay unique across runs.
  std::atomic<int64_t> next{std::max(state->next_job_id, state->next_event_seq)};
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&] {
      for (;;) {
        const int64_t id = next.fetch_add(1);
        core::JobRecord job = testing::FullJob(id);
        Status s =
            committer.Commit(core::StoreBatch{{job}, {testing::SubmitEvent(job, id)}, {}, {}});
        if (!s.ok()) {
          std::fprintf(stderr, "jobdb_crash_writer: %s\n", s.ToString().c_str());
          std::_Exit(1);
        }
        const std::string line = std::to_string(id) + "\n";
        // One write(2) per line: shorter than PIPE_BUF, so lines never interleave.
        if (write(STDOUT_FILENO, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
          std::_Exit(1);
        }
      }
    });
  }
  for (std::thread& w : writers) w.join();
  return 0;
}

}  // namespace
}  // namespace podsched::jobdb

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: jobdb_crash_writer DB_PATH [THREADS]\n");
    return 2;
  }
  return podsched::jobdb::Run(argv[1], argc > 2 ? std::atoi(argv[2]) : 4);
}
