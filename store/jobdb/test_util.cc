#include "store/jobdb/test_util.h"

#include <cstdlib>

#include "common/check.h"

namespace podsched::jobdb::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "jobdb-XXXXXX").string();
  PODSCHED_CHECK(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

core::JobRecord FullJob(int64_t id) {
  using std::chrono::seconds;
  core::JobRecord job;
  job.id = JobId(id);
  job.spec.name = "train-" + std::to_string(id);
  job.spec.user = UserName(id % 2 ? "ada" : "bob");
  job.spec.accelerator = "v2-32";
  job.spec.preemptible = id % 3 == 0;
  job.spec.priority = static_cast<int>(id % 7);
  job.spec.command = "/usr/bin/podtrain";
  job.spec.args = {"--steps", std::to_string(id), std::string("\xff\xfe bytes\0x", 10)};
  job.spec.env = {{"SEED", std::to_string(id)}, {"RAW", "\xc3\x28"}};
  job.spec.ranks_per_host = 4;
  job.spec.launcher = id % 2 ? core::Launcher::kExec : core::Launcher::kMpi;
  job.spec.checkpoint_interval = seconds(600);
  job.spec.grace_period = seconds(45);
  job.spec.max_runtime = std::chrono::hours(12);
  job.spec.max_restarts = 5;
  job.spec.expected_runtime = std::chrono::microseconds(3'600'000'001);
  if (id % 2 == 1) {  // odd ids: an array task with dependencies; even ids: neither (old records)
    job.spec.array = core::ArrayTask{JobId(id - 1), 7, 2, "1,3,5-9%2"};
    job.spec.dependencies = {{core::DependencyKind::kAfterOk, JobId(3), std::nullopt},
                             {core::DependencyKind::kAfterNotOk, JobId(4), 12},
                             {core::DependencyKind::kAfterAny, JobId(5), std::nullopt}};
  }
  job.state = core::JobState::kPreempting;
  job.epoch = 3;
  job.restarts = 1;
  job.preemptions = 2;
  job.reason = "preempted for job 9 \x80";
  job.placement = pod::FleetPlacement{0, pod::Placement{{2, 4}, {2, 1}}};
  job.step = 12345;
  job.last_checkpoint_step = 12000;
  job.submit_time = TimePoint(Duration(1'700'000'000'000'001 + id));
  job.start_time = job.submit_time + seconds(10);
  job.last_checkpoint_time = job.submit_time + seconds(20);
  job.end_time = TimePoint(Duration(-5));  // negative times survive too
  job.not_before = job.submit_time + seconds(30);
  job.preempt_deadline = job.submit_time + seconds(40);
  job.reserved_for = JobId(id + 1000);
  job.cancel_requested = true;
  job.usage_core_hours = 0.1 + 1.0 / 3.0 + static_cast<double>(id);
  job.run_time = Duration(987'654'321);
  job.checkpoint_store = "file:///ckpt/us-central1-b";
  job.checkpoint_zone = "us-central1-b";
  job.checkpoint_bytes = int64_t{3} << 32;
  job.egress_bytes = int64_t{5} << 33;
  job.egress_usd = 0.1 + 1.0 / 7.0;
  return job;
}

core::JobEvent SubmitEvent(const core::JobRecord& job, int64_t seq) {
  core::JobEvent event;
  event.seq = seq;
  event.time = job.submit_time;
  event.job = job.id;
  event.to = core::JobState::kQueued;
  event.reason = "submitted";
  return event;
}

core::UserRecord FullUser(const std::string& name) {
  core::UserRecord user;
  user.name = UserName(name);
  user.quota = core::Quota{16, 128};
  user.admin = true;
  user.decayed_core_hours = 2.0 / 3.0;
  user.egress_usd = 1.0 / 3.0;
  user.usage_as_of = TimePoint(Duration(1'700'000'123'456'789));
  return user;
}

}  // namespace podsched::jobdb::testing
