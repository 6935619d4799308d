// bench_jobdb: durable submissions per second into the SQLite job store (WAL,
// synchronous=FULL), with 1, 8 and 64 concurrent submitters, without and with group commit,
// side by side in one run.
//
// A submission is what Scheduler::Submit commits: one job row and its event, acknowledged only
// when durable. "nogroup": the submitters share one SqliteJobRepository behind a mutex, one
// transaction (one fsync) per submission. "group": they share a GroupCommitter, which commits
// every pending submission in one transaction.
//
// Then a pass that tells `--queued` waiting jobs a new reason (a victim's minimum runtime passed,
// a head started): the commit of those reasons as whole job rows (before core::ReasonUpdate) and
// as reason updates, alternately on the same database, median of `--reason-passes` each.
//
// usage: bench_jobdb [--submissions N] [--concurrency 1,8,64] [--queued N] [--reason-passes N]
//                    [--dir DIR]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "store/jobdb/group_committer.h"
#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

using Clock = std::chrono::steady_clock;

struct RunResult {
  double per_second = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double mean_group = 1;
};

core::StoreBatch Submission(int64_t id) {
  core::JobRecord job = testing::FullJob(id);
  job.state = core::JobState::kQueued;
  job.placement.reset();
  return core::StoreBatch{{job}, {testing::SubmitEvent(job, id)}, {}, {}};
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(i), v.end());
  return v[i];
}

// Runs `threads` submitters, `total` submissions in all, each through `commit(batch)`.
template <typename CommitFn>
RunResult Drive(int threads, int total, CommitFn commit) {
  std::vector<std::vector<double>> latencies(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int64_t id = 1 + t; id <= total; id += threads) {
        const core::StoreBatch batch = Submission(id);
        const auto begin = Clock::now();
        Status s = commit(batch);
        if (!s.ok()) {
          std::fprintf(stderr, "bench_jobdb: commit failed: %s\n", s.ToString().c_str());
          std::exit(1);
        }
        latencies[static_cast<size_t>(t)].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  RunResult r;
  r.per_second = static_cast<double>(total) / seconds;
  r.p50_ms = Percentile(all, 0.50);
  r.p99_ms = Percentile(all, 0.99);
  return r;
}

std::unique_ptr<SqliteJobRepository> OpenFresh(const std::string& path) {
  auto repo = SqliteJobRepository::Open(path);
  if (!repo) {
    std::fprintf(stderr, "bench_jobdb: %s\n", repo.error().ToString().c_str());
    std::exit(1);
  }
  return std::move(*repo);
}

RunResult NoGroup(const std::string& path, int threads, int total) {
  auto repo = OpenFresh(path);
  std::mutex mu;
  return Drive(threads, total, [&](const core::StoreBatch& b) {
    std::lock_guard lock(mu);
    return repo->Commit(b);
  });
}

RunResult Group(const std::string& path, int threads, int total) {
  GroupCommitter committer(OpenFresh(path));
  RunResult r =
      Drive(threads, total, [&](const core::StoreBatch& b) { return committer.Commit(b); });
  const GroupCommitStats stats = committer.stats();
  r.mean_group = static_cast<double>(stats.batches) / static_cast<double>(stats.groups);
  return r;
}

struct ReasonResult {
  double rows_ms = 0;
  double updates_ms = 0;
};

// One database of `queued` queued jobs; each pass gives all of them a new reason, committed as
// rows and as reason updates in turn (interleaved: the same file, the same page cache).
ReasonResult ReasonPasses(const std::string& path, int queued, int passes) {
  auto repo = OpenFresh(path);
  std::vector<core::JobRecord> jobs;
  core::StoreBatch submit;
  for (int64_t id = 1; id <= queued; ++id) {
    core::StoreBatch one = Submission(id);
    jobs.push_back(one.jobs.front());
    submit.jobs.push_back(std::move(one.jobs.front()));
    submit.events.push_back(std::move(one.events.front()));
  }
  if (Status s = repo->Commit(submit); !s.ok()) {
    std::fprintf(stderr, "bench_jobdb: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  std::vector<double> rows_ms, updates_ms;
  for (int p = 0; p < 2 * passes; ++p) {
    const SharedText reason("no free 4x4 block of hosts; " + std::to_string(p) +
                            " running jobs would have to go, after their minimum runtime");
    core::StoreBatch batch;
    const bool as_rows = p % 2 == 0;
    for (core::JobRecord& job : jobs) {
      job.reason = reason;
      if (as_rows) {
        batch.jobs.push_back(job);
      } else {
        batch.reasons.push_back({job.id, reason});
      }
    }
    const auto begin = Clock::now();
    if (Status s = repo->Commit(batch); !s.ok()) {
      std::fprintf(stderr, "bench_jobdb: %s\n", s.ToString().c_str());
      std::exit(1);
    }
    (as_rows ? rows_ms : updates_ms)
        .push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
  }
  return {Percentile(rows_ms, 0.5), Percentile(updates_ms, 0.5)};
}

int Main(int argc, char** argv) {
  CLI::App app{
      "bench_jobdb: durable submissions per second into SQLite, with and without group "
      "commit"};
  int submissions = 2000;
  std::vector<int> concurrency = {1, 8, 64};
  std::string dir;
  int queued = 10000;
  int reason_passes = 5;
  app.add_option("--submissions", submissions, "submissions per configuration")
      ->check(CLI::PositiveNumber);
  app.add_option("--queued", queued, "queued jobs told a new reason in each reason pass")
      ->check(CLI::PositiveNumber);
  app.add_option("--reason-passes", reason_passes, "reason passes of each kind (median)")
      ->check(CLI::PositiveNumber);
  app.add_option("--concurrency", concurrency, "concurrent submitters (comma-separated)")
      ->delimiter(',');
  app.add_option("--dir", dir, "directory for the databases (default: a fresh temp directory)");
  CLI11_PARSE(app, argc, argv);

  testing::TempDir temp;
  const std::filesystem::path base = dir.empty() ? temp.path() : std::filesystem::path(dir);
  std::printf("bench_jobdb: %d submissions per configuration, WAL + synchronous=FULL, in %s\n",
              submissions, base.c_str());
  std::printf("%-11s %-8s %12s %10s %10s %11s\n", "submitters", "mode", "submits/s", "p50 ms",
              "p99 ms", "mean group");
  std::vector<std::string> figures;
  for (int c : concurrency) {
    const std::string tag = std::to_string(c);
    const RunResult without = NoGroup((base / ("nogroup-" + tag + ".db")).string(), c, submissions);
    const RunResult with = Group((base / ("group-" + tag + ".db")).string(), c, submissions);
    for (const auto& [mode, r] : {std::pair{"nogroup", without}, std::pair{"group", with}}) {
      std::printf("%-11d %-8s %12.0f %10.2f %10.2f %11.1f\n", c, mode, r.per_second, r.p50_ms,
                  r.p99_ms, r.mean_group);
    }
    char line[160];
    std::snprintf(line, sizeof line, "FIGURE jobdb_submits_per_s_nogroup_%d %.0f ops/s", c,
                  without.per_second);
    figures.emplace_back(line);
    std::snprintf(line, sizeof line, "FIGURE jobdb_submits_per_s_group_%d %.0f ops/s", c,
                  with.per_second);
    figures.emplace_back(line);
    std::snprintf(line, sizeof line, "FIGURE jobdb_group_commit_speedup_%d %.2f ratio", c,
                  with.per_second / without.per_second);
    figures.emplace_back(line);
  }
  const ReasonResult reasons = ReasonPasses((base / "reasons.db").string(), queued, reason_passes);
  std::printf(
      "a pass telling %d queued jobs a new reason, committed: as rows %.1f ms, as reason "
      "updates %.1f ms (median of %d each)\n",
      queued, reasons.rows_ms, reasons.updates_ms, reason_passes);
  const std::string k =
      queued % 1000 == 0 ? std::to_string(queued / 1000) + "k" : std::to_string(queued);
  char line[160];
  std::snprintf(line, sizeof line, "FIGURE jobdb_reasons_%s_as_rows_ms %.2f ms", k.c_str(),
                reasons.rows_ms);
  figures.emplace_back(line);
  std::snprintf(line, sizeof line, "FIGURE jobdb_reasons_%s_as_updates_ms %.2f ms", k.c_str(),
                reasons.updates_ms);
  figures.emplace_back(line);
  std::snprintf(line, sizeof line, "FIGURE jobdb_reason_update_speedup %.2f ratio",
                reasons.rows_ms / reasons.updates_ms);
  figures.emplace_back(line);
  for (const std::string& f : figures) std::printf("%s\n", f.c_str());
  return 0;
}

}  // namespace
}  // namespace podsched::jobdb

int main(int argc, char** argv) { return podsched::jobdb::Main(argc, argv); }
