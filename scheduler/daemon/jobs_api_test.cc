// The jobs resource through the engine: submit, get, list and paging, ownership, bad input,
// cancel and preempt.
#include "scheduler/daemon/jobs_api.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "api.pb.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/engine_test_util.h"
#include "scheduler/daemon/json_util.h"
#include "scheduler/daemon/visibility.h"

namespace podsched::daemon {
namespace {

using JobsApiTest = testing::ApiFixture;

// podctl's submissions: the spec in protobuf's binary encoding, and the reply in it when asked
// for; errors stay JSON.
TEST_F(JobsApiTest, ASubmissionInProtobufsBinaryEncodingIsAnsweredInItWhenAsked) {
  api::JobSpec spec;
  spec.set_name("bin");
  spec.set_accelerator("v2-8");
  spec.set_command("train");
  HttpRequest req{"POST", "/api/v1/jobs", "Bearer t-alice", spec.SerializeAsString(), "test"};
  req.content_type = "application/x-protobuf";
  req.accept = "application/x-protobuf";
  HttpResponse r = engine_->Handle(req, now_);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.content_type, "application/x-protobuf");
  api::SubmitResponse out;
  ASSERT_TRUE(out.ParseFromString(r.body));
  EXPECT_EQ(out.job().spec().name(), "bin");
  EXPECT_EQ(out.job().user(), "alice");
  auto got = Call("GET", "/api/v1/jobs/" + std::to_string(out.job().id()), "t-alice");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.content_type, "application/json");

  // Without Accept: the reply in JSON.
  req.accept.clear();
  r = engine_->Handle(req, now_);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  ASSERT_TRUE(ParseJson(r.body, {}, &out).ok()) << r.body;

  // A bad spec or a body that is no JobSpec: a JSON error, whatever Accept says.
  req.accept = "application/x-protobuf";
  spec.set_accelerator("v2-12");
  req.body = spec.SerializeAsString();
  r = engine_->Handle(req, now_);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_NE(r.body.find("v2-12"), std::string::npos) << r.body;
  req.body = "not protobuf at all";
  r = engine_->Handle(req, now_);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("invalid protobuf body"), std::string::npos) << r.body;
}

TEST_F(JobsApiTest, SubmitThenGetAndList) {
  int64_t id = SubmitAs("t-alice");
  engine_->Tick(now_);
  auto got = Call("GET", "/api/v1/jobs/" + std::to_string(id), "t-alice");
  ASSERT_EQ(got.status, 200);
  api::Job job;
  ASSERT_TRUE(ParseJson(got.body, {}, &job).ok());
  EXPECT_EQ(job.user(), "alice");
  EXPECT_EQ(job.state(), "PLACED");
  EXPECT_EQ(job.hosts_size(), 1);
  EXPECT_EQ(job.spec().command(), "train");
  auto list = Call("GET", "/api/v1/jobs?state=placed", "t-alice");
  ASSERT_EQ(list.status, 200);
  api::JobList jobs;
  ASSERT_TRUE(ParseJson(list.body, {}, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).id(), id);
}

TEST_F(JobsApiTest, AuthAndOwnership) {
  EXPECT_EQ(Call("GET", "/api/v1/jobs", "").status, 401);
  EXPECT_EQ(Call("GET", "/api/v1/jobs", "wrong").status, 401);
  int64_t id = SubmitAs("t-alice");
  std::string path = "/api/v1/jobs/" + std::to_string(id);
  EXPECT_EQ(Call("GET", path, "t-bob").status, 404);
  EXPECT_EQ(Call("POST", path + "/cancel", "t-bob").status, 404);
  EXPECT_EQ(Call("GET", path, "t-admin").status, 200);
  api::JobList bobs;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/jobs", "t-bob").body, {}, &bobs).ok());
  EXPECT_EQ(bobs.jobs_size(), 0);
  EXPECT_EQ(Call("GET", "/api/v1/users", "t-bob").status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/users", "t-admin").status, 200);
  EXPECT_EQ(Call("PUT", "/api/v1/quotas", "t-bob", R"({"user":"bob","on_demand_cores":8})").status,
            403);
}

TEST_F(JobsApiTest, BadInputIsA4xxJsonError) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"{", 400},
      {R"({"name":"x","accelerator":"v2-8","command":"c","color":"red"})", 400},
      {R"({"name":"x","accelerator":"v2-8","command":"c","priority":"high"})", 400},
      {R"({"name":"x","accelerator":"v2-12","command":"c"})", 400},
      {R"({"name":"x","accelerator":"v2-8","command":"c","priority":-1})", 400},
      {R"({"name":"x\u0007y","accelerator":"v2-8","command":"c"})", 400},
      {std::string(100, '[') + std::string(100, ']'), 400},
  };
  for (const auto& [body, status] : cases) {
    auto r = Call("POST", "/api/v1/jobs", "t-alice", body);
    EXPECT_EQ(r.status, status) << body << " -> " << r.body;
    api::Error e;
    EXPECT_TRUE(ParseJson(r.body, {}, &e).ok()) << r.body;
    EXPECT_FALSE(e.code().empty());
    EXPECT_FALSE(e.message().empty());
  }
  EXPECT_EQ(Call("GET", "/api/v1/nope", "t-alice").status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/jobs", "t-alice").status, 405);
  EXPECT_EQ(Call("GET", "/api/v1/jobs/abc", "t-alice").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/jobs?page_size=501", "t-alice").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/jobs?state=SLEEPING", "t-alice").status, 400);
  SubmitAs("t-alice");  // still serving
}

// Audit M9: a spec whose Launch would pass the agents' 1 MiB message limit is refused at submit
// (it was accepted, dropped by the agent, and the job held its hosts PLACED for ever), and
// nothing is stored; one just under the limit is accepted.
TEST_F(JobsApiTest, ASpecWhoseLaunchTheAgentsWouldRefuseIsRefusedAtSubmit) {
  auto body = [](int values, size_t bytes) {
    std::string env;
    for (int i = 0; i < values; ++i) {
      env += std::string(env.empty() ? "" : ",") + "\"V" + std::to_string(i) + "\":\"" +
             std::string(bytes, 'x') + "\"";
    }
    return R"({"name":"big","accelerator":"v2-8","command":"c","env":{)" + env + "}}";
  };
  const std::string too_big = body(15, 63 << 10);  // 945 KiB of env, a body under 1 MiB
  auto r = Call("POST", "/api/v1/jobs", "t-alice", too_big);
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 200);
  EXPECT_NE(r.body.find("KiB the host agents accept"), std::string::npos) << r.body.substr(0, 300);
  EXPECT_TRUE(engine_->scheduler().jobs().empty());
  EXPECT_EQ(Call("POST", "/api/v1/jobs", "t-alice", body(13, 63 << 10)).status, 201);  // 819 KiB
}

TEST_F(JobsApiTest, LauncherIsMpiOrExecAndShownBack) {
  auto bad = Call("POST", "/api/v1/jobs", "t-alice",
                  R"({"name":"x","accelerator":"v2-8","command":"c","launcher":"torchrun"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("launcher 'torchrun' is not one of: mpi"), std::string::npos) << bad.body;
  auto good = Call("POST", "/api/v1/jobs", "t-alice",
                   R"({"name":"x","accelerator":"v2-8","command":"c","launcher":"exec"})");
  ASSERT_EQ(good.status, 201) << good.body;
  EXPECT_NE(good.body.find(R"("launcher":"exec")"), std::string::npos) << good.body;
}

TEST_F(JobsApiTest, PagingVisitsEveryJobOnce) {
  std::set<int64_t> submitted, seen;
  for (int i = 0; i < 7; ++i) submitted.insert(SubmitAs("t-alice"));
  std::string token;
  int pages = 0;
  do {
    auto r = Call("GET", "/api/v1/jobs?page_size=3&page_token=" + token, "t-alice");
    ASSERT_EQ(r.status, 200);
    api::JobList page;
    ASSERT_TRUE(ParseJson(r.body, {}, &page).ok());
    EXPECT_EQ(page.total(), 7);
    for (const auto& j : page.jobs()) EXPECT_TRUE(seen.insert(j.id()).second);
    token = page.next_page_token();
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, submitted);
}

// A list is rendered from the job snapshot with each job's text made once per committed row:
// what it returns must be exactly the JSON of the JobList the scheduler's own records make, for a
// job that holds hosts (its cost grows with time) as for one that waits or ended, on every page
// and again later.
TEST_F(JobsApiTest, AListIsTheJsonOfTheSchedulersJobsByteForByte) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(SubmitAs(i % 2 == 0 ? "t-alice" : "t-bob"));
  ids.push_back(SubmitAs("t-alice", "v2-32"));
  engine_->Tick(now_);
  ASSERT_EQ(Call("POST", "/api/v1/jobs/" + std::to_string(ids[1]) + "/cancel", "t-bob").status,
            200);
  auto expect_page = [&](const std::string& query, int page_size, int64_t after) {
    auto r = Call("GET", "/api/v1/jobs" + query, "t-admin");
    ASSERT_EQ(r.status, 200) << r.body;
    api::JobList want;
    int total = 0;
    for (const auto& [id, job] : engine_->scheduler().jobs()) {
      ++total;
      if (id.value() <= after) continue;
      if (want.jobs_size() == page_size) {
        if (want.next_page_token().empty()) {
          want.set_next_page_token(std::to_string(want.jobs(page_size - 1).id()));
        }
        continue;
      }
      *want.add_jobs() = JobToProto(job, engine_->scheduler(), now_, false);
    }
    want.set_total(total);
    EXPECT_EQ(r.body, ToJson(want)) << query;
  };
  auto expect_job = [&](int64_t id) {
    auto r = Call("GET", "/api/v1/jobs/" + std::to_string(id), "t-admin");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, ToJson(JobToProto(*engine_->scheduler().Find(JobId(id)),
                                        engine_->scheduler(), now_, true)));
  };
  for (int64_t id : ids) expect_job(id);
  expect_page("", 100, 0);
  expect_page("?page_size=4", 4, 0);
  expect_page("?page_size=4&page_token=" + std::to_string(ids[3]), 4, ids[3]);
  now_ += std::chrono::minutes(10);  // the placed jobs cost more; the others' text is kept
  expect_page("", 100, 0);
  for (int64_t id : ids) expect_job(id);
}

// The engine as the daemon runs it: each test sets it up, then starts it.
class JobsListTest : public testing::EngineFixture {
 protected:
  void SetUp() override {}
  // A request of the admin, one millisecond after the previous one.
  ApiAnswer Answer(const std::string& method, const std::string& target,
                   const std::string& body = "") {
    now_ += std::chrono::milliseconds(1);
    return engine_->Answer(HttpRequest{method, target, "Bearer t-admin", body, "test"}, now_);
  }
  HttpResponse Handle(const std::string& method, const std::string& target,
                      const std::string& body = "") {
    now_ += std::chrono::milliseconds(1);
    return engine_->Handle(HttpRequest{method, target, "Bearer t-admin", body, "test"}, now_);
  }
  static constexpr const char* kJob = R"({"name":"j","accelerator":"v2-8","command":"x"})";
};

// With group commit a list shows only what was committed, and the reads, rendered on other
// threads while the engine goes on committing, each see every job committed before them.
TEST_F(JobsListTest, ReadsSeeWhatWasCommittedBeforeThemFromOtherThreads) {
  config_.limits.requests_per_second = 1e6;
  config_.limits.burst = 1e6;
  group_commit_ = true;
  StartEngine();
  auto submit = [&] {
    ASSERT_EQ(std::get<HttpResponse>(Answer("POST", "/api/v1/jobs", kJob)).status, 201);
  };
  auto total_of = [](const HttpResponse& r) {
    api::JobList list;
    EXPECT_TRUE(ParseJson(r.body, {}, &list).ok()) << r.body;
    return list.total();
  };

  submit();
  auto before = Answer("GET", "/api/v1/jobs?page_size=1");
  ASSERT_TRUE(std::holds_alternative<SnapshotRead>(before));
  EXPECT_EQ(total_of(std::get<SnapshotRead>(before)()), 0) << "not committed yet";
  // The job itself is answered on the scheduler thread until it is committed (the daemon holds
  // that reply for the flush), then from the snapshot.
  auto job = Answer("GET", "/api/v1/jobs/1");
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(job));
  EXPECT_EQ(std::get<HttpResponse>(job).status, 200);
  ASSERT_TRUE(engine_->Flush(now_).ok());
  auto after = Answer("GET", "/api/v1/jobs?page_size=1");
  EXPECT_EQ(total_of(std::get<SnapshotRead>(after)()), 1);
  EXPECT_EQ(total_of(std::get<SnapshotRead>(before)()), 0) << "a read keeps its snapshot";
  job = Answer("GET", "/api/v1/jobs/1");
  ASSERT_TRUE(std::holds_alternative<SnapshotRead>(job));
  api::Job described;
  ASSERT_TRUE(ParseJson(std::get<SnapshotRead>(job)().body, {}, &described).ok());
  EXPECT_EQ(described.id(), 1);
  EXPECT_EQ(described.spec().command(), "x");

  std::mutex mu;
  std::condition_variable ready;
  std::deque<std::pair<SnapshotRead, int>> reads;  // a read and the jobs committed before it
  bool done = false;
  std::atomic<int> wrong = 0, rendered = 0;
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      for (;;) {
        std::pair<SnapshotRead, int> read;
        {
          std::unique_lock lock(mu);
          ready.wait(lock, [&] { return done || !reads.empty(); });
          if (reads.empty()) return;
          read = std::move(reads.front());
          reads.pop_front();
        }
        HttpResponse r = read.first();
        api::JobList list;
        if (r.status != 200 || !ParseJson(r.body, {}, &list).ok() || list.total() != read.second) {
          ++wrong;
        }
        ++rendered;
      }
    });
  }
  int committed = 1;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 3; ++i) submit();
    ASSERT_TRUE(engine_->Flush(now_).ok());
    committed += 3;
    engine_->Tick(now_);
    ASSERT_TRUE(engine_->Flush(now_).ok());
    auto read = Answer("GET", "/api/v1/jobs?page_size=50");
    {
      std::lock_guard lock(mu);
      reads.emplace_back(std::move(std::get<SnapshotRead>(read)), committed);
    }
    ready.notify_one();
  }
  {
    std::lock_guard lock(mu);
    done = true;
  }
  ready.notify_all();
  for (auto& r : readers) r.join();
  EXPECT_EQ(rendered.load(), 200);
  EXPECT_EQ(wrong.load(), 0);
}

// Retention forgets ended jobs without a commit: the list (not the history) drops them too.
TEST_F(JobsListTest, AJobRetentionForgotLeavesTheList) {
  config_.scheduler.ended_job_retention = std::chrono::minutes(1);
  StartEngine();
  auto listed = [&](const std::string& query) {
    api::JobList list;
    EXPECT_TRUE(ParseJson(Handle("GET", "/api/v1/jobs" + query).body, {}, &list).ok());
    return list.jobs_size();
  };
  ASSERT_EQ(Handle("POST", "/api/v1/jobs", kJob).status, 201);
  ASSERT_EQ(Handle("POST", "/api/v1/jobs/1/cancel").status, 200);
  EXPECT_EQ(listed(""), 1);
  now_ += std::chrono::minutes(2);
  engine_->Tick(now_);
  ASSERT_EQ(engine_->scheduler().stats().forgotten, 1);
  EXPECT_EQ(listed(""), 0);
  EXPECT_EQ(listed("?history=true"), 1) << "still in the store";
}

TEST(VisibilityTest, AnAdminSeesEveryJobAUserOnlyTheirOwn) {
  const Principal admin{"root", true}, alice{"alice", false};
  EXPECT_TRUE(MaySee(admin, "alice"));
  EXPECT_TRUE(MaySee(admin, "bob"));
  EXPECT_TRUE(MaySee(alice, "alice"));
  EXPECT_FALSE(MaySee(alice, "bob"));
  EXPECT_FALSE(OnlyOwnerFor(admin).has_value());
  EXPECT_EQ(OnlyOwnerFor(alice), "alice");
}

TEST_F(JobsApiTest, AUserListsOnlyTheirOwnJobsWhateverTheUserFilter) {
  int64_t alices = SubmitAs("t-alice");
  int64_t bobs = SubmitAs("t-bob");
  auto list = [&](const std::string& token, const std::string& query) {
    api::JobList out;
    EXPECT_TRUE(ParseJson(Call("GET", "/api/v1/jobs" + query, token).body, {}, &out).ok());
    std::vector<int64_t> ids;
    for (const auto& j : out.jobs()) ids.push_back(j.id());
    return ids;
  };
  EXPECT_EQ(list("t-alice", ""), std::vector<int64_t>{alices});
  EXPECT_EQ(list("t-alice", "?user=bob"), std::vector<int64_t>{alices});
  EXPECT_EQ(list("t-admin", ""), (std::vector<int64_t>{alices, bobs}));
  EXPECT_EQ(list("t-admin", "?user=bob"), std::vector<int64_t>{bobs});
}

TEST_F(JobsApiTest, CancelAndPreemptNeedPostAndARunningJob) {
  int64_t id = SubmitAs("t-alice");
  engine_->Tick(now_);
  const std::string path = "/api/v1/jobs/" + std::to_string(id);
  EXPECT_EQ(Call("GET", path + "/cancel", "t-alice").status, 405);
  EXPECT_EQ(Call("POST", path, "t-alice").status, 405);
  EXPECT_EQ(Call("GET", path + "/restart", "t-alice").status, 404);
  EXPECT_EQ(Call("POST", path + "/preempt", "t-bob").status, 404);  // not his
  auto preempted = Call("POST", path + "/preempt", "t-alice");
  ASSERT_EQ(preempted.status, 200) << preempted.body;
  EXPECT_NE(preempted.body.find(R"("state":"PREEMPTING")"), std::string::npos) << preempted.body;
  // Cancelling a job that is being preempted is allowed: it has not ended yet.
  EXPECT_EQ(Call("POST", path + "/cancel", "t-admin").status, 200);
  api::JobEventList events;
  ASSERT_TRUE(ParseJson(Call("GET", path + "/events", "t-alice").body, {}, &events).ok());
  EXPECT_GE(events.events_size(), 3);  // QUEUED, PLACED, PREEMPTING, ...
  EXPECT_EQ(Call("GET", path + "/events", "t-bob").status, 404);
  EXPECT_EQ(Call("GET", path + "/logs", "t-bob").status, 404);
  EXPECT_EQ(Call("GET", path + "/progress", "t-bob").status, 404);
}

TEST_F(JobsApiTest, ArraysSubmitListCancelAsOneAndTasksByName) {
  // One call and one committed batch for the 10,000 tasks (counted, not timed: a wall-clock
  // bound here failed under ASan on a busy machine; the speed is bench_daemon's to measure).
  const int64_t commits_before = repo_.commits();
  auto r = Call("POST", "/api/v1/jobs", "t-alice",
                R"({"name":"sweep","accelerator":"v2-8","command":"train","array":"0-9999%4"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(repo_.commits() - commits_before, 1) << "a 10,000-task array is one batch";
  api::SubmitResponse out;
  ASSERT_TRUE(ParseJson(r.body, {}, &out).ok());
  EXPECT_EQ(out.array_tasks(), 10000);
  const int64_t array = out.job().id();
  EXPECT_EQ(out.job().array_id(), array);
  EXPECT_EQ(out.job().array_index(), 0);
  EXPECT_EQ(out.job().task_name(), std::to_string(array) + "_0");
  EXPECT_EQ(out.job().array().tasks(), 10000);
  EXPECT_EQ(out.job().array().throttle(), 4);
  EXPECT_EQ(out.job().spec().array(), "0-9999%4");
  engine_->Tick(now_);

  auto task = Call("GET", "/api/v1/jobs/" + std::to_string(array) + "_7", "t-alice");
  ASSERT_EQ(task.status, 200) << task.body;
  api::Job seventh;
  ASSERT_TRUE(ParseJson(task.body, {}, &seventh).ok());
  EXPECT_EQ(seventh.id(), array + 7);
  EXPECT_EQ(seventh.array().tasks_by_state().at("PLACED"), 4);
  EXPECT_EQ(seventh.array().tasks_by_state().at("QUEUED"), 9996);
  EXPECT_EQ(Call("GET", "/api/v1/jobs/" + std::to_string(array) + "_10000", "t-alice").status, 404);
  // An index past the bound is not taken modulo 2^32 ("_4294967303" is not task 7).
  EXPECT_EQ(Call("GET", "/api/v1/jobs/" + std::to_string(array) + "_4294967303", "t-alice").status,
            404);
  EXPECT_EQ(Call("GET", "/api/v1/jobs/" + std::to_string(array + 1) + "_0", "t-alice").status,
            404);  // not an array id
  EXPECT_EQ(Call("GET", "/api/v1/jobs/" + std::to_string(array) + "_7", "t-bob").status, 404);

  SubmitAs("t-alice");
  api::JobList list;
  ASSERT_TRUE(ParseJson(Call("GET", "/api/v1/jobs?page_size=500&array=" + std::to_string(array),
                             "t-alice")
                            .body,
                        {}, &list)
                  .ok());
  EXPECT_EQ(list.total(), 10000);
  EXPECT_EQ(list.jobs(3).task_name(), std::to_string(array) + "_3");
  EXPECT_EQ(Call("GET", "/api/v1/jobs?array=x", "t-alice").status, 400);

  // ARRAYID_INDEX cancels one task; the array id every task.
  ASSERT_EQ(Call("POST", "/api/v1/jobs/" + std::to_string(array) + "_9/cancel", "t-alice").status,
            200);
  EXPECT_EQ(engine_->scheduler().Find(JobId(array + 9))->state, core::JobState::kCancelled);
  EXPECT_EQ(engine_->scheduler().Find(JobId(array + 10))->state, core::JobState::kQueued);
  ASSERT_EQ(Call("POST", "/api/v1/jobs/" + std::to_string(array) + "/cancel", "t-alice").status,
            200);
  const core::JobArray* a = engine_->scheduler().FindArray(JobId(array));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->Count(core::JobState::kCancelled), 9996);
  EXPECT_EQ(a->Count(core::JobState::kPreempting), 4);
}

TEST_F(JobsApiTest, DependenciesShowTheirStateAndBadOnesAreRefused) {
  int64_t parent = SubmitAs("t-alice");
  int64_t bobs = SubmitAs("t-bob");
  auto r = Call("POST", "/api/v1/jobs", "t-alice",
                R"({"name":"c","accelerator":"v2-8","command":"train","dependency":"afterok:)" +
                    std::to_string(parent) + R"("})");
  ASSERT_EQ(r.status, 201) << r.body;
  api::SubmitResponse child;
  ASSERT_TRUE(ParseJson(r.body, {}, &child).ok());
  ASSERT_EQ(child.job().dependencies_size(), 1);
  EXPECT_EQ(child.job().dependencies(0).dependency(), "afterok:" + std::to_string(parent));
  EXPECT_EQ(child.job().dependencies(0).target_state(), "QUEUED");
  EXPECT_EQ(child.job().dependencies(0).verdict(), "waiting");
  EXPECT_EQ(child.job().spec().dependency(), "afterok:" + std::to_string(parent));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"afterok:" + std::to_string(bobs), "alice has no job"},
      {"afterok:99999", "alice has no job 99999"},
      {"afterwards:1", "not a dependency type"},
      {"afterok:1_x", "ARRAY_INDEX"},
  };
  const size_t jobs = engine_->scheduler().jobs().size();
  for (const auto& [dep, message] : bad) {
    auto refused = Call("POST", "/api/v1/jobs", "t-alice",
                        R"({"name":"c","accelerator":"v2-8","command":"t","dependency":")" + dep +
                            R"("})");
    EXPECT_EQ(refused.status, 400) << dep;
    EXPECT_NE(refused.body.find(message), std::string::npos) << refused.body;
  }
  for (const std::string array : {"0-10000", "5-1000001", "%3", "3-1"}) {
    auto refused = Call("POST", "/api/v1/jobs", "t-alice",
                        R"({"name":"c","accelerator":"v2-8","command":"t","array":")" + array +
                            R"("})");
    EXPECT_EQ(refused.status, 400) << array << " " << refused.body;
  }
  auto reserved = Call("POST", "/api/v1/jobs", "t-alice",
                       R"({"name":"c","accelerator":"v2-8","command":"t","env":{"RANK":"3"}})");
  EXPECT_EQ(reserved.status, 400);
  EXPECT_NE(reserved.body.find("env RANK"), std::string::npos) << reserved.body;
  EXPECT_EQ(engine_->scheduler().jobs().size(), jobs);
}

}  // namespace
}  // namespace podsched::daemon
