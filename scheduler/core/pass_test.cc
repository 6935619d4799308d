// The steps of one scheduling pass, each on its own, over a real HostLeases and placement policy
// with the jobs and the Binder faked (cycle.h): what each step decides and what it asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "pod/placement.h"
#include "scheduler/core/cycle.h"

namespace podsched::core {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
const TimePoint t0 = TimePoint{} + hours(100);

// The jobs as a map; a lease's live owner is the job whose current epoch holds it.
class FakeJobs final : public PassJobs {
 public:
  const JobRecord* Find(JobId job) const override {
    auto it = jobs.find(job);
    return it == jobs.end() ? nullptr : &it->second;
  }
  int Cores(JobId job) const override { return cores.at(job); }
  const JobRecord* LiveOwner(const Lease& lease) const override {
    const JobRecord* job = Find(lease.owner.job);
    return job && job->epoch == lease.owner.epoch && HoldsHosts(job->state) ? job : nullptr;
  }
  std::optional<std::string> HeldBack(const JobRecord& job) const override {
    auto it = held_back.find(job.id);
    if (it == held_back.end()) return std::nullopt;
    return it->second;
  }
  std::map<JobId, JobRecord> jobs;
  std::map<JobId, int> cores;
  std::map<JobId, std::string> held_back;
};

// Records what the pass asks for.
class RecordingBinder final : public Binder {
 public:
  void Bind(JobRecord& job, const std::vector<pod::FleetPlacement>& slices) override {
    for (const pod::FleetPlacement& placement : slices) binds.push_back({job.id, placement});
  }
  void StartPreemption(JobId victim, std::string reason, JobId for_job) override {
    preemptions.push_back({victim, std::move(reason), for_job});
  }
  void SetReason(JobRecord& job, SharedText reason) override { reasons[job.id] = reason; }
  void Tell(QueuedRef& ref, SharedText reason, uint32_t number) override {
    reasons[ref.job->id] = reason;
    ref.told = number;
  }
  void WakeAt(TimePoint at) override { wakes.push_back(at); }
  void PassAgain() override { ++passes_again; }

  std::vector<std::pair<JobId, pod::FleetPlacement>> binds;
  std::vector<std::tuple<JobId, std::string, JobId>> preemptions;
  std::map<JobId, std::string> reasons;
  std::vector<TimePoint> wakes;
  int passes_again = 0;
};

// A rectangle of the test's pod (pod 0 of its fleet unless `pod` says otherwise).
pod::FleetPlacement At(int row, int col, int rows, int cols, int pod = 0) {
  return pod::FleetPlacement{pod, pod::Placement{{row, col}, {rows, cols}}};
}

class PassTest : public ::testing::Test {
 protected:
  PassTest() : PassTest(pod::Fleet::Of(*pod::Pod::Create("test", pod::Generation::kV2, 4, 4))) {}
  explicit PassTest(pod::Fleet fleet) : hosts_(std::move(fleet)) {}

  JobRecord& Queued(int64_t id, const std::string& user, const std::string& type,
                    bool preemptible) {
    JobRecord& job = jobs_.jobs[JobId(id)];
    job.id = JobId(id);
    job.spec.user = UserName(user);
    job.spec.accelerator = type;
    job.spec.preemptible = preemptible;
    job.submit_time = t0;
    auto parsed = hosts_.fleet().ParseType(type);
    EXPECT_TRUE(parsed.has_value());
    types_.emplace(job.id, *parsed);
    jobs_.cores[job.id] = parsed->tensor_cores();
    auto [it, fresh] = users_.try_emplace(job.spec.user);
    UserRecord& u = it->second;
    u.name = job.spec.user;
    if (fresh) u.quota = Quota{1024, 1024};
    const uint32_t number =
        user_numbers_.try_emplace(job.spec.user, static_cast<uint32_t>(user_numbers_.size()))
            .first->second;
    refs_.insert_or_assign(job.id,
                           QueuedRef{&job, types_.at(job.id), &u, &use_[job.spec.user], number});
    return job;
  }
  // A job running since `start` on `placement`, its last checkpoint at `checkpoint`.
  JobRecord& Running(int64_t id, const std::string& user, const std::string& type, bool preemptible,
                     pod::FleetPlacement placement, TimePoint start, TimePoint checkpoint) {
    JobRecord& job = Queued(id, user, type, preemptible);
    refs_.erase(job.id);
    job.state = JobState::kRunning;
    job.epoch = 1;
    job.placement = placement;
    job.start_time = start;
    job.last_checkpoint_time = checkpoint;
    EXPECT_TRUE(hosts_.Hold(JobEpoch{job.id, 1}, placement).has_value());
    return job;
  }
  QueueEntry Entry(int64_t id) {
    QueuedRef& ref = refs_.at(JobId(id));
    return QueueEntry{ref.priority, ref.user_number, 0, ref.job->submit_time, JobId(id), &ref};
  }
  Pass MakePass(std::string_view profile_name, TimePoint now = t0) {
    auto profile = MakeProfile(profile_name, FairShareRules{minutes(10), 10});
    EXPECT_TRUE(profile.has_value());
    return MakePass(std::move(*profile), now);
  }
  // A pass over a profile of the test's own steps.
  Pass MakePass(Profile profile, TimePoint now = t0) {
    profiles_.push_back(std::move(profile));  // a pass holds a reference to its profile
    return Pass(Pass::Inputs{profiles_.back(), min_runtime_, hosts_, jobs_, binder_}, now);
  }

  HostLeases hosts_;
  FakeJobs jobs_;
  RecordingBinder binder_;
  std::map<JobId, pod::AcceleratorType> types_;
  std::map<UserName, UserRecord> users_;
  std::map<UserName, QuotaUsage> use_;
  std::map<UserName, uint32_t> user_numbers_;  // as Accounting::UserNumber
  std::map<JobId, QueuedRef> refs_;
  std::deque<Profile> profiles_;
  Duration min_runtime_{0};
};

TEST_F(PassTest, FilterSaysWhyAJobCannotBeConsidered) {
  Pass pass = MakePass("fifo-first-fit");
  Queued(1, "ada", "v2-8", false);
  EXPECT_EQ(pass.Filter(Entry(1)), std::nullopt);

  jobs_.held_back[JobId(1)] = "waiting for job 7 to succeed";
  EXPECT_EQ(pass.Filter(Entry(1)), "waiting for job 7 to succeed");
  jobs_.held_back.clear();

  jobs_.jobs[JobId(1)].not_before = t0 + minutes(1);
  EXPECT_EQ(pass.Filter(Entry(1)), "waiting for its start time");
  jobs_.jobs[JobId(1)].not_before = {};

  users_[UserName("ada")].quota = Quota{8, 800};
  Queued(2, "ada", "v2-32", false);
  EXPECT_EQ(pass.Filter(Entry(2)),
            "quota: the on-demand quota of 8 cores is smaller than the job's 32; it can start "
            "only once the quota is raised");

  // Cores in use and cores promised to the user's other reservations both count.
  users_[UserName("ada")].quota = Quota{16, 800};
  use_[UserName("ada")].on_demand_cores = 8;
  EXPECT_EQ(pass.Filter(Entry(1)), std::nullopt);
  Queued(3, "ada", "v2-8", false);
  hosts_.Reserve(JobId(3), Reservation{At(3, 3, 1, 1), {}, {}});
  EXPECT_EQ(pass.Filter(Entry(1)), "quota: 8/16 on-demand cores in use, 8 reserved for other jobs");
  EXPECT_EQ(pass.Filter(Entry(3)), std::nullopt) << "its own reservation is not counted twice";
}

TEST_F(PassTest, ScoreKeepsOffReservedHostsAndHostsBoundEarlierInThePass) {
  hosts_.Reserve(JobId(9), Reservation{At(0, 0, 2, 2), {}, {}});
  Pass pass = MakePass("fifo-first-fit");
  Queued(1, "ada", "v2-32", false);
  Queued(2, "bob", "v2-32", false);
  EXPECT_EQ(pass.Score(Entry(1)), At(0, 2, 2, 2)) << "first fit after the reserved block";
  pass.Consider(Entry(1));
  ASSERT_EQ(binder_.binds.size(), 1u);
  EXPECT_EQ(binder_.binds[0].second, At(0, 2, 2, 2));
  EXPECT_EQ(pass.Score(Entry(2)), At(2, 0, 2, 2)) << "the pass's own bind is excluded";
}

TEST_F(PassTest, PreemptEvictsTheLeastLostWorkAndReservesItsHosts) {
  // Four preemptible 2x2 jobs fill the pod; job 12 checkpointed last, so it loses least.
  Running(10, "pre", "v2-32", true, At(0, 0, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(11, "pre", "v2-32", true, At(0, 2, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(12, "pre", "v2-32", true, At(2, 0, 2, 2), t0 - hours(2), t0 - minutes(5));
  Running(13, "pre", "v2-32", true, At(2, 2, 2, 2), t0 - hours(2), t0 - hours(1));
  Pass pass = MakePass("fifo-first-fit");
  Queued(1, "ada", "v2-32", false);
  EXPECT_EQ(pass.Score(Entry(1)), std::nullopt);
  EXPECT_TRUE(pass.Preempt(*Entry(1).ref, types_.at(JobId(1))));
  ASSERT_EQ(binder_.preemptions.size(), 1u);
  EXPECT_EQ(binder_.preemptions[0],
            std::make_tuple(JobId(12), std::string("preempted for job 1 (on-demand)"), JobId(1)));
  ASSERT_NE(hosts_.ReservationOf(JobId(1)), nullptr);
  EXPECT_EQ(hosts_.ReservationOf(JobId(1))->placement, At(2, 0, 2, 2));
  EXPECT_EQ(binder_.reasons[JobId(1)], "waiting for job 12 to checkpoint");
}

TEST_F(PassTest, PreemptWaitsForTheMinimumRuntimeAndNeverEvictsOnDemand) {
  min_runtime_ = minutes(10);
  Running(10, "pre", "v2-32", true, At(0, 0, 2, 2), t0 - minutes(4), t0 - minutes(4));
  Running(11, "od", "v2-32", false, At(0, 2, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(12, "od", "v2-32", false, At(2, 0, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(13, "od", "v2-32", false, At(2, 2, 2, 2), t0 - hours(2), t0 - hours(1));
  Pass pass = MakePass("fifo-first-fit");
  Queued(1, "ada", "v2-32", false);
  EXPECT_FALSE(pass.Preempt(*Entry(1).ref, types_.at(JobId(1))));
  EXPECT_TRUE(binder_.preemptions.empty());
  EXPECT_EQ(binder_.reasons[JobId(1)],
            "no free 2x2 block of hosts; 1 running jobs would have to go, after their minimum "
            "runtime");
  EXPECT_EQ(binder_.wakes, std::vector<TimePoint>{t0 + minutes(6)}) << "a pass when it may go";
  EXPECT_EQ(hosts_.ReservationOf(JobId(1)), nullptr);

  // An hour later job 10 may go. A preemptible job of higher priority evicts it, never an
  // on-demand job, though job 11 just checkpointed and so would lose the least.
  jobs_.jobs[JobId(11)].last_checkpoint_time = t0 + hours(1);
  Pass later = MakePass("fifo-first-fit", t0 + hours(1));
  JobRecord& pre = Queued(2, "pre2", "v2-32", true);
  pre.spec.priority = 100;
  EXPECT_TRUE(later.Preempt(*Entry(2).ref, types_.at(JobId(2))));
  ASSERT_EQ(binder_.preemptions.size(), 1u);
  EXPECT_EQ(std::get<0>(binder_.preemptions[0]), JobId(10));
  EXPECT_EQ(std::get<1>(binder_.preemptions[0]), "preempted for job 2 (higher priority)");
  // Without a higher priority it may evict no one.
  Queued(3, "pre3", "v2-32", true);
  EXPECT_FALSE(later.Preempt(*Entry(3).ref, types_.at(JobId(3))));
  EXPECT_EQ(binder_.reasons[JobId(3)], "no free 2x2 block of hosts");
}

TEST_F(PassTest, WithoutBackfillEveryJobBehindTheFirstBlockedOneWaits) {
  Running(10, "od", "v2-32", false, At(0, 0, 2, 2), t0 - hours(1), t0 - hours(1));
  Pass pass = MakePass("fifo-first-fit");
  Queued(1, "ada", "v2-128", false);  // the whole pod
  Queued(2, "bob", "v2-8", false);    // would fit
  pass.Consider(Entry(1));
  pass.Consider(Entry(2));
  EXPECT_TRUE(binder_.binds.empty());
  EXPECT_EQ(binder_.reasons[JobId(1)], "no free 4x4 block of hosts");
  EXPECT_EQ(binder_.reasons[JobId(2)], "waiting for earlier jobs to start (FIFO order)");
}

TEST_F(PassTest, EasyBackfillLetsAJobAheadOnlyWhenItEndsBeforeTheHeadStarts) {
  JobRecord& running = Running(10, "od", "v2-32", false, At(0, 0, 2, 2), t0 - hours(1), t0);
  running.spec.expected_runtime = hours(2);  // ends in an hour
  Pass pass = MakePass("fifo-backfill");
  Queued(1, "ada", "v2-128", false);  // the head: the whole pod, in an hour
  Queued(2, "bob", "v2-8", false).spec.expected_runtime = minutes(30);  // ends before
  Queued(3, "carl", "v2-8", false);  // no estimate: could delay the head
  pass.Consider(Entry(1));
  pass.Consider(Entry(2));
  pass.Consider(Entry(3));
  ASSERT_EQ(binder_.binds.size(), 1u);
  EXPECT_EQ(binder_.binds[0].first, JobId(2));
  EXPECT_EQ(binder_.reasons[JobId(3)], "no free host");
}

// The steps are objects a profile holds: a profile of the test's own, without a PostFilter,
// never preempts, where fifo-first-fit (LeastLostWork) would.
TEST_F(PassTest, AProfileWithoutAPostFilterNeverPreempts) {
  Running(10, "pre", "v2-32", true, At(0, 0, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(11, "pre", "v2-32", true, At(0, 2, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(12, "pre", "v2-32", true, At(2, 0, 2, 2), t0 - hours(2), t0 - hours(1));
  Running(13, "pre", "v2-32", true, At(2, 2, 2, 2), t0 - hours(2), t0 - hours(1));
  Profile no_preemption = *MakeProfile("fifo-first-fit", FairShareRules{minutes(10), 10});
  no_preemption.post_filter = nullptr;
  Pass pass = MakePass(std::move(no_preemption));
  Queued(1, "ada", "v2-32", false);
  EXPECT_FALSE(pass.Preempt(*Entry(1).ref, types_.at(JobId(1))));
  EXPECT_TRUE(binder_.preemptions.empty());
  EXPECT_EQ(binder_.reasons[JobId(1)], "no free 2x2 block of hosts");
  EXPECT_TRUE(MakePass("fifo-first-fit").Preempt(*Entry(1).ref, types_.at(JobId(1))));
}

// Permit alone: strict order names the reason of everyone behind and no head; EASY backfill
// names the head's expected start and rectangle, from the releases it asks for.
TEST(PermitTest, StrictOrderHoldsEveryoneBehindEasyBackfillNamesTheHead) {
  const pod::Pod pod = *pod::Pod::Create("p", pod::Generation::kV2, 4, 4);
  pod::Pod view = pod;
  ASSERT_TRUE(view.Allocate(AllocationId(1), pod::Placement{{0, 0}, {4, 4}}).ok());
  const pod::AcceleratorType whole = *pod.ParseType("v2-128");
  auto first_fit = *pod::MakePlacementPolicy("first-fit");
  int asked = 0;
  auto releases = [&] {
    ++asked;
    return std::vector<ExpectedRelease>{{AllocationId(1), t0 + hours(1)}};
  };
  const std::vector<pod::Pod> views = {view};
  Permit::Decision strict = StrictOrder().OnBlocked(views, {0}, whole, *first_fit, releases);
  EXPECT_EQ(strict.behind, "waiting for earlier jobs to start (FIFO order)");
  EXPECT_FALSE(strict.head.has_value());
  EXPECT_EQ(asked, 0) << "strict order needs no releases";
  Permit::Decision easy = EasyBackfill().OnBlocked(views, {0}, whole, *first_fit, releases);
  EXPECT_FALSE(easy.behind.has_value());
  ASSERT_TRUE(easy.head.has_value());
  EXPECT_EQ(easy.head->start, t0 + hours(1));
  EXPECT_EQ(easy.head->placement, (pod::Placement{{0, 0}, {4, 4}}));
  EXPECT_EQ(asked, 1);
}

// The shadow as EASY backfill first computed it: a copy of the pod, the releases applied in time
// order, a group of equal times at once, and the policy asked after each group.
Shadow ShadowByReleasingInOrder(const pod::Pod& pod, const pod::AcceleratorType& type,
                                const pod::PlacementPolicy& policy,
                                std::vector<ExpectedRelease> releases) {
  std::stable_sort(releases.begin(), releases.end(),
                   [](const ExpectedRelease& a, const ExpectedRelease& b) { return a.at < b.at; });
  pod::Pod trial = pod;
  for (size_t i = 0; i < releases.size();) {
    const TimePoint at = releases[i].at;
    for (; i < releases.size() && releases[i].at == at; ++i) {
      (void)trial.Release(releases[i].allocation);
    }
    if (auto p = policy.Choose(trial, type)) return Shadow{at, *p};
  }
  return Shadow{};
}

// EarliestStart (each host's release time, the earliest of the legal positions' latest) and
// PlaceAt answer
// as releasing in order and asking the policy after each time does, on pods of random
// allocations, unhealthy and draining hosts, releases at equal, unknown and past times, of
// allocations the pod does not hold and none for some it does.
TEST(ShadowTest, EarliestStartAndPlacementAreThoseOfReleasingInTimeOrder) {
  std::mt19937 rng(29);
  const auto below = [&](uint32_t n) { return static_cast<int>(rng() % n); };
  int with_start = 0, unknown_start = 0, never = 0;
  for (const char* policy_name : {"first-fit", "best-fit"}) {
    auto policy = *pod::MakePlacementPolicy(policy_name);
    for (int round = 0; round < 400; ++round) {
      const bool v3 = below(2) == 1;
      pod::Pod pod = *pod::Pod::Create("p", v3 ? pod::Generation::kV3 : pod::Generation::kV2,
                                       v3 ? 8 : 4, v3 ? 8 : 4);
      std::vector<ExpectedRelease> releases;
      for (int a = 1; a <= 12; ++a) {
        const pod::SliceShape shape{1 << below(2), 1 << below(3)};
        const pod::Placement at{{below(pod.host_rows()), below(pod.host_cols())}, shape};
        if (!pod.Allocate(AllocationId(a), at).ok()) continue;
        const int when = below(8);
        if (when == 7) continue;  // no release expected
        releases.push_back({AllocationId(a), when == 6 ? TimePoint::max() : t0 + hours(when % 4)});
      }
      releases.push_back({AllocationId(99), t0 + minutes(below(300))});  // not this pod's
      for (int h = 0; h < 2; ++h) {
        const HostId host(below(static_cast<uint32_t>(pod.num_hosts())));
        ASSERT_TRUE((below(2) == 0 ? pod.MarkUnhealthy(host) : pod.SetDraining(host, true)).ok());
      }
      std::shuffle(releases.begin(), releases.end(), rng);
      for (const char* type_name : {"v2-8", "v2-32", "v2-128", "v3-32", "v3-128", "v3-512"}) {
        auto type = pod.ParseType(type_name);
        if (!type) continue;
        const Shadow expected = ShadowByReleasingInOrder(pod, *type, *policy, releases);
        const std::optional<TimePoint> start = EarliestStart(pod, *type, releases);
        const Shadow got =
            start ? Shadow{*start, PlaceAt(pod, *type, *policy, releases, *start)} : Shadow{};
        ASSERT_EQ(got.start, expected.start)
            << policy_name << " round " << round << " " << type_name;
        ASSERT_EQ(got.placement, expected.placement)
            << policy_name << " round " << round << " " << type_name;
        if (!expected.placement) {
          ++never;
        } else if (expected.start == TimePoint::max()) {
          ++unknown_start;
        } else {
          ++with_start;
        }
      }
    }
  }
  // The rounds reach every kind of answer.
  EXPECT_GT(with_start, 100);
  EXPECT_GT(unknown_start, 20);
  EXPECT_GT(never, 20);
}

TEST(ProfileTest, EachProfileHoldsItsStepsAndAnUnknownNameListsThem) {
  for (std::string_view name : ProfileNames()) {
    auto p = MakeProfile(name, FairShareRules{minutes(10), 10});
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_NE(p->queue_sort, nullptr);
    EXPECT_NE(p->score, nullptr);
    EXPECT_NE(p->post_filter, nullptr);
    EXPECT_NE(p->permit, nullptr);
  }
  EXPECT_NE(dynamic_cast<const StrictOrder*>(
                MakeProfile("fifo-first-fit", FairShareRules{minutes(10), 10})->permit.get()),
            nullptr);
  EXPECT_NE(dynamic_cast<const FairShareSort*>(
                MakeProfile("fair-best-fit", FairShareRules{minutes(10), 10})->queue_sort.get()),
            nullptr);
  auto bad = MakeProfile("lifo", FairShareRules{minutes(10), 10});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(),
            "lifo is not a scheduler profile; valid: fifo-first-fit, fifo-backfill, "
            "fair-first-fit, fair-best-fit");
}

// A fleet (issue 28): two 4x4 v2 pods "a" and "b", a standalone v2-8 device "dev" and a 4x4 v3
// pod "v3".
class FleetPassTest : public PassTest {
 protected:
  FleetPassTest()
      : PassTest(*pod::Fleet::Create({{"a", pod::Generation::kV2, 4, 4, "zone-1"},
                                      {"b", pod::Generation::kV2, 4, 4, "zone-1"},
                                      {"dev", pod::Generation::kV2, 1, 1, "zone-2"},
                                      {"v3", pod::Generation::kV3, 4, 4, "zone-2"}})) {}
  static constexpr int kA = 0, kB = 1, kDev = 2, kV3 = 3;
  // Pod b full but for the 2x2 block at (2,2).
  void FillBButOneBlock() {
    Running(20, "x", "v2-32", false, At(0, 0, 2, 2, kB), t0 - hours(1), t0);
    Running(21, "x", "v2-32", false, At(0, 2, 2, 2, kB), t0 - hours(1), t0);
    Running(22, "x", "v2-32", false, At(2, 0, 2, 2, kB), t0 - hours(1), t0);
  }
};

TEST_F(FleetPassTest, BestFitPutsAV2_32InTheTightestHoleOfTheFleetFirstFitInTheFirstPod) {
  FillBButOneBlock();
  Queued(1, "ada", "v2-32", false);
  EXPECT_EQ(MakePass("fair-best-fit").Score(Entry(1)), At(2, 2, 2, 2, kB))
      << "the hole of its size: pod a stays whole";
  EXPECT_EQ(MakePass("fifo-first-fit").Score(Entry(1)), At(0, 0, 2, 2, kA));
}

TEST_F(FleetPassTest, BestFitPutsAV2_8OnTheDeviceAndAV3TypeOnlyOnTheV3Pod) {
  Queued(1, "ada", "v2-8", false);
  EXPECT_EQ(MakePass("fair-best-fit").Score(Entry(1)), At(0, 0, 1, 1, kDev));
  Queued(2, "ada", "v3-32", false);
  EXPECT_EQ(MakePass("fair-best-fit").Score(Entry(2)), At(0, 0, 2, 2, kV3));
  EXPECT_EQ(MakePass("fifo-first-fit").Score(Entry(2)), At(0, 0, 2, 2, kV3));
}

TEST_F(FleetPassTest, ABindInOnePodLeavesTheSameRectangleOfAnotherFree) {
  Queued(1, "ada", "v2-128", false);
  Queued(2, "bob", "v2-128", false);
  Queued(3, "carl", "v2-128", false);
  Pass pass = MakePass("fifo-first-fit");
  for (int id : {1, 2, 3}) pass.Consider(Entry(id));
  ASSERT_EQ(binder_.binds.size(), 2u);
  EXPECT_EQ(binder_.binds[0].second, At(0, 0, 4, 4, kA));
  EXPECT_EQ(binder_.binds[1].second, At(0, 0, 4, 4, kB));
  EXPECT_EQ(binder_.reasons[JobId(3)], "no free 4x4 block of hosts in pods a, b");
}

TEST_F(FleetPassTest, PreemptionComparesTheLostWorkOfVictimsAcrossPods) {
  // Both v2 pods full of preemptible 2x2 jobs; the one that checkpointed last is in pod b.
  int id = 10;
  for (int pod : {kA, kB}) {
    for (auto [r, c] : {std::pair{0, 0}, {0, 2}, {2, 0}, {2, 2}}) {
      const TimePoint checkpoint = id == 16 ? t0 - minutes(2) : t0 - hours(1);
      Running(id++, "pre", "v2-32", true, At(r, c, 2, 2, pod), t0 - hours(2), checkpoint);
    }
  }
  Pass pass = MakePass("fifo-first-fit");
  Queued(1, "ada", "v2-32", false);
  EXPECT_EQ(pass.Score(Entry(1)), std::nullopt);
  EXPECT_TRUE(pass.Preempt(*Entry(1).ref, types_.at(JobId(1))));
  ASSERT_EQ(binder_.preemptions.size(), 1u);
  EXPECT_EQ(std::get<0>(binder_.preemptions[0]), JobId(16));
  ASSERT_NE(hosts_.ReservationOf(JobId(1)), nullptr);
  EXPECT_EQ(hosts_.ReservationOf(JobId(1))->placement, At(2, 0, 2, 2, kB));
  // Those hosts are out of this pass's views: another job cannot take them.
  Queued(2, "bob", "v2-32", false);
  EXPECT_EQ(pass.Score(Entry(2)), std::nullopt);
}

TEST_F(FleetPassTest, AJobThatNoHealthyPodCanHoldNamesThePodsItConsidered) {
  for (int h = 0; h < 16; ++h) {
    ASSERT_TRUE(hosts_.MarkUnhealthy(hosts_.fleet().FleetHost(kA, HostId(h))).ok());
  }
  ASSERT_TRUE(hosts_.MarkUnhealthy(hosts_.fleet().FleetHost(kB, HostId(5))).ok());
  Queued(1, "ada", "v2-128", false);
  Pass pass = MakePass("fifo-first-fit");
  pass.Consider(Entry(1));
  EXPECT_TRUE(binder_.binds.empty());
  EXPECT_EQ(binder_.reasons[JobId(1)],
            "no 4x4 block of healthy hosts in pods a, b (17 unhealthy or draining): waits for "
            "repairs without blocking others");
}

// A job may name a zone or a pod: it is placed only there (best fit would take the device), its
// reasons name only those pods, and its failures are remembered apart from unscoped jobs of the
// same shape in the same pass.
TEST_F(FleetPassTest, AScopedJobRunsOnlyInItsZoneOrPodAndIsMemoizedApart) {
  JobRecord& in_b = Queued(1, "ada", "v2-8", false);
  in_b.spec.pod = "b";
  JobRecord& in_zone = Queued(2, "ada", "v2-8", false);
  in_zone.spec.zone = "zone-1";
  Queued(3, "ada", "v2-8", false);
  Pass pass = MakePass("fair-best-fit");
  for (int id : {3, 1, 2}) pass.Consider(Entry(id));
  ASSERT_EQ(binder_.binds.size(), 3u);
  EXPECT_EQ(binder_.binds[0].second.pod, kDev) << "unscoped: the device, as best fit says";
  EXPECT_EQ(binder_.binds[1].second.pod, kB);
  EXPECT_NE(binder_.binds[2].second.pod, kDev) << "zone-1 holds pods a and b, not the device";

  // Pod b full: a job scoped to it waits naming b; an unscoped one of that shape still goes.
  FillBButOneBlock();
  Running(23, "x", "v2-32", false, At(2, 2, 2, 2, kB), t0 - hours(1), t0);
  JobRecord& waits = Queued(4, "ada", "v2-32", false);
  waits.spec.pod = "b";
  Queued(5, "ada", "v2-32", false);
  Pass second = MakePass("fair-best-fit");  // backfill: no strict order behind job 4
  for (int id : {4, 5}) second.Consider(Entry(id));
  EXPECT_EQ(binder_.reasons[JobId(4)], "no free 2x2 block of hosts in pod b");
  ASSERT_EQ(binder_.binds.size(), 4u);
  EXPECT_EQ(binder_.binds[3].first, JobId(5));
  EXPECT_EQ(binder_.binds[3].second.pod, kA);

  // A stored job whose pod left the configuration waits, saying so.
  JobRecord& gone = Queued(6, "ada", "v2-8", false);
  gone.spec.pod = "c";
  Pass third = MakePass("fifo-first-fit");
  third.Consider(Entry(6));
  EXPECT_EQ(binder_.reasons[JobId(6)],
            "no pod of this fleet matches its pod c that can hold a v2-8 (was the configuration "
            "changed?)");
}

TEST_F(PassTest, AwaitReservationSaysWhatItWaitsForAndDropsASpoiltOne) {
  JobRecord& victim = Running(10, "pre", "v2-32", true, At(0, 0, 2, 2), t0 - hours(1), t0);
  victim.state = JobState::kPreempting;
  JobRecord& waiting = Queued(1, "ada", "v2-32", false);
  hosts_.Reserve(JobId(1), Reservation{At(0, 0, 2, 2), {JobId(10)}, {}});
  Pass pass = MakePass("fifo-first-fit");
  EXPECT_TRUE(pass.AwaitReservation(waiting));
  EXPECT_EQ(binder_.reasons[JobId(1)], "waiting for job 10 to checkpoint");

  victim.state = JobState::kQueued;  // stopped; its hosts not yet reported free
  EXPECT_TRUE(pass.AwaitReservation(waiting));
  EXPECT_EQ(binder_.reasons[JobId(1)], "waiting for the hosts of job 10 to be released");

  ASSERT_TRUE(hosts_.MarkUnhealthy(HostId(1)).ok());
  EXPECT_FALSE(pass.AwaitReservation(waiting));
  EXPECT_EQ(hosts_.ReservationOf(JobId(1)), nullptr) << "a reserved host failed: look again";
}

TEST_F(PassTest, AFilteredJobLosesItsReservationAndAsksForAnotherPass) {
  Queued(1, "ada", "v2-32", false);
  hosts_.Reserve(JobId(1), Reservation{At(0, 0, 2, 2), {}, {}});
  jobs_.held_back[JobId(1)] = "throttled";
  Pass pass = MakePass("fifo-first-fit");
  pass.Consider(Entry(1));
  EXPECT_EQ(hosts_.ReservationOf(JobId(1)), nullptr);
  EXPECT_EQ(binder_.passes_again, 1);
  EXPECT_EQ(binder_.reasons[JobId(1)], "throttled");
}

// A head seen again keeps its number (the memos of the jobs blocked behind it hold again after a
// pass that had another head); numbers are never reused, also after the table forgets.
TEST(PassHeadsTest, AHeadSeenAgainKeepsItsNumberAndNumbersAreNeverReused) {
  PassHeads heads;
  const auto head = [](int col) {
    return PassHeads::Head{0, pod::Placement{{0, col}, {1, 1}}, t0 + hours(2)};
  };
  const uint64_t a = heads.IdOf(head(0));
  const uint64_t b = heads.IdOf(head(1));
  EXPECT_NE(a, b);
  EXPECT_EQ(heads.IdOf(head(0)), a);
  EXPECT_EQ(heads.IdOf(head(1)), b);
  EXPECT_NE(heads.IdOf(PassHeads::Head{0, std::nullopt, t0 + hours(2)}), a);
  std::set<uint64_t> seen{a, b};
  for (int col = 2; col < 40; ++col) seen.insert(heads.IdOf(head(col)));
  const uint64_t again = heads.IdOf(head(0));  // forgotten by now: a new number
  EXPECT_FALSE(seen.contains(again));
}

TEST(QueueSortTest, FifoBySubmitFairShareByPriorityAgingThenUsage) {
  std::map<JobId, JobRecord> jobs;
  std::map<UserName, UserRecord> users;
  JobQueue queued;
  Accounting accounting(Accounting::Rules{Quota{}, hours(1), 1000});
  auto add = [&](int64_t id, const std::string& user, TimePoint submit, int priority) {
    JobRecord& job = jobs[JobId(id)];
    job.id = JobId(id);
    job.spec.user = UserName(user);
    job.spec.priority = priority;
    job.submit_time = submit;
    UserRecord& u = users[job.spec.user];
    u.name = job.spec.user;
    queued.Add(job.id, submit,
               QueuedRef{&job, *pod::AcceleratorType::Parse("v2-8"), &u, nullptr,
                         accounting.UserNumber(job.spec.user)});
  };
  add(1, "heavy", t0 - minutes(30), 0);
  add(2, "light", t0 - minutes(20), 0);
  add(3, "light", t0 - minutes(10), 1);
  accounting.StartHolding(JobId(99), UserName("heavy"), true, 64, t0 - hours(1));

  auto ids = [](const std::vector<QueueEntry>& q) {
    std::vector<int64_t> out;
    for (const QueueEntry& e : q) out.push_back(e.id.value());
    return out;
  };
  std::vector<QueueEntry> storage;
  EXPECT_EQ(ids(FifoSort().Sort(queued, accounting, t0, storage)), (std::vector<int64_t>{1, 2, 3}));
  // Fair share without aging: priority first, then the user holding less.
  EXPECT_EQ(ids(FairShareSort(hours(100), 0).Sort(queued, accounting, t0, storage)),
            (std::vector<int64_t>{3, 2, 1}));
  // With aging (+1 per 10 minutes waited, at most 3): job 1 has waited 30 minutes (+3), job 3
  // 10 (+1 on top of its 1), job 2 20 (+2).
  EXPECT_EQ(ids(FairShareSort(minutes(10), 3).Sort(queued, accounting, t0, storage)),
            (std::vector<int64_t>{1, 2, 3}));
}

// FairShareSort buckets the queue instead of sorting it (steps.cc). On random queues, with
// narrow and wide priority ranges (the second takes the comparison sort), users of equal usage,
// jobs added and removed between sorts, submit times after the sort's: the order is a
// permutation of the queue, in the documented order, with the documented keys.
TEST(QueueSortTest, FairShareOrderOnRandomQueuesIsTheDocumentedOrder) {
  for (const int max_priority : {4, 1000}) {
    std::mt19937_64 rng(static_cast<uint64_t>(max_priority));
    std::deque<JobRecord> jobs;
    std::map<UserName, UserRecord> users;
    JobQueue queued;
    Accounting accounting(Accounting::Rules{Quota{}, hours(1), 1000});
    // Users 0-3 hold nothing (equal usage); 4-7 hold different amounts.
    for (int u = 4; u < 8; ++u) {
      accounting.StartHolding(JobId(1000000 + u), UserName("u" + std::to_string(u)), true, 8 * u,
                              t0 - hours(u));
    }
    int64_t next_id = 1;
    std::vector<JobId> live;
    const FairShareSort sort(minutes(10), 6);
    std::vector<QueueEntry> storage;
    for (int round = 0; round < 20; ++round) {
      for (int n = 0; n < 300; ++n) {
        JobRecord& job = jobs.emplace_back();
        job.id = JobId(next_id++);
        job.spec.user = UserName("u" + std::to_string(rng() % 8));
        job.spec.priority = static_cast<int>(rng() % (max_priority + 1));
        // Ties too, on and between the aging steps' edges (whole minutes in even rounds, seconds
        // in odd ones), and a few after t0 (a clock set back): up to 25 minutes, a bonus of -2.
        job.submit_time =
            round % 2 == 0 ? t0 - minutes(static_cast<int64_t>(rng() % 146)) + minutes(25)
                           : t0 - seconds(static_cast<int64_t>(rng() % (146 * 60))) + minutes(25);
        UserRecord& u = users[job.spec.user];
        u.name = job.spec.user;
        queued.Add(job.id, job.submit_time,
                   QueuedRef{&job, *pod::AcceleratorType::Parse("v2-8"), &u, nullptr,
                             accounting.UserNumber(job.spec.user)});
        live.push_back(job.id);
      }
      for (int n = 0; n < 100; ++n) {
        const size_t k = rng() % live.size();
        queued.Remove(live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      }
      const std::vector<QueueEntry>& order = sort.Sort(queued, accounting, t0, storage);
      ASSERT_EQ(order.size(), live.size());
      std::set<JobId> seen;
      for (size_t i = 0; i < order.size(); ++i) {
        const QueueEntry& e = order[i];
        const JobRecord& job = *e.ref->job;
        ASSERT_EQ(e.id, job.id);
        ASSERT_TRUE(seen.insert(e.id).second) << "job " << e.id.value() << " twice";
        ASSERT_EQ(e.submit, job.submit_time);
        const int64_t waited = (t0 - job.submit_time) / minutes(10);
        ASSERT_EQ(e.effective_priority, job.spec.priority + std::min<int64_t>(waited, 6));
        ASSERT_EQ(e.usage, accounting.UsageNow(job.spec.user, t0));
        if (i == 0) continue;
        const QueueEntry& p = order[i - 1];
        ASSERT_TRUE(std::tie(e.effective_priority, p.usage, p.submit, p.id) <
                    std::tie(p.effective_priority, e.usage, e.submit, e.id))
            << "round " << round << ": job " << p.id.value() << " before " << e.id.value();
      }
      ASSERT_EQ(seen, std::set<JobId>(live.begin(), live.end()));
    }
  }
}

}  // namespace
}  // namespace podsched::core
