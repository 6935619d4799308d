// Accounting alone: cores held per class, the one fair-share rule, changed rows, the creation
// budget.
#include "scheduler/core/accounting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

namespace podsched::core {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

Accounting Make(int per_hour = 10) {
  return Accounting(Accounting::Rules{Quota{40, 800}, hours(1), per_hour});
}

const UserName kAda("ada"), kBob("bob");
const TimePoint t0 = TimePoint{} + hours(1000);

TEST(AccountingTest, CoresAreHeldPerClassUntilTheEpochStops) {
  Accounting a = Make();
  a.StartHolding(JobId(1), kAda, /*preemptible=*/true, 32, t0);
  a.StartHolding(JobId(2), kAda, /*preemptible=*/false, 8, t0);
  a.StartHolding(JobId(3), kBob, /*preemptible=*/true, 8, t0);
  EXPECT_EQ(a.InUseOf(kAda).preemptible_cores, 32);
  EXPECT_EQ(a.InUseOf(kAda).on_demand_cores, 8);
  EXPECT_EQ(a.CoresHeld().preemptible_cores, 40);
  EXPECT_EQ(a.CoresHeld().on_demand_cores, 8);

  EXPECT_DOUBLE_EQ(a.StopHolding(JobId(1), t0 + minutes(30)), 16.0);  // 32 cores, half an hour
  EXPECT_EQ(a.StopHolding(JobId(1), t0 + hours(1)), 0.0) << "stopped twice";
  EXPECT_EQ(a.StopHolding(JobId(9), t0 + hours(1)), 0.0) << "never held";
  EXPECT_EQ(a.InUseOf(kAda).preemptible_cores, 0);
  EXPECT_EQ(a.InUseOf(kAda).on_demand_cores, 8);
  EXPECT_EQ(a.CoresHeld().preemptible_cores, 8);
  EXPECT_EQ(a.InUseOf(UserName("nobody-yet")).preemptible_cores, 0);
}

TEST(AccountingTest, FairShareUsageIsClosedUsageDecayedPlusWhatRunsNow) {
  Accounting a = Make();
  a.User(kAda, t0);
  a.StartHolding(JobId(1), kAda, true, 8, t0);
  // Running for an hour: 8 core-hours, nothing closed yet.
  EXPECT_DOUBLE_EQ(a.UsageNow(kAda, t0 + hours(1)), 8.0);
  EXPECT_DOUBLE_EQ(a.StopHolding(JobId(1), t0 + hours(1)), 8.0);
  EXPECT_DOUBLE_EQ(a.UsageNow(kAda, t0 + hours(1)), 8.0);
  // One half-life later the closed usage counts half; a new epoch adds its own hours.
  a.StartHolding(JobId(2), kAda, false, 4, t0 + hours(1));
  EXPECT_NEAR(a.UsageNow(kAda, t0 + hours(2)), 4.0 + 4.0, 1e-9);
  EXPECT_NEAR(a.UsageNow(kAda, t0 + hours(3)), 2.0 + 8.0, 1e-9);
  EXPECT_EQ(a.UsageNow(kBob, t0 + hours(3)), 0.0);  // unknown user
}

TEST(AccountingTest, UsageByNumberIsUsageByName) {
  Accounting a = Make();
  // Numbered before the user has a record or holds anything (a job is queued first).
  const uint32_t ada = a.UserNumber(kAda);
  EXPECT_EQ(a.UsageNow(ada, t0), 0.0);
  a.User(kAda, t0);
  // Epochs started out of job order: both ways sum them in job order, to the same bits.
  a.StartHolding(JobId(7), kAda, true, 3, t0);
  a.StartHolding(JobId(2), kAda, false, 5, t0 + minutes(7));
  a.StartHolding(JobId(4), kAda, true, 11, t0 + minutes(13));
  EXPECT_EQ(a.UsageNow(ada, t0 + hours(1)), a.UsageNow(kAda, t0 + hours(1)));
  EXPECT_NEAR(a.UsageNow(ada, t0 + hours(1)), 3.0 + 5.0 * 53 / 60 + 11.0 * 47 / 60, 1e-9);
  a.StopHolding(JobId(2), t0 + hours(1));
  EXPECT_EQ(a.UsageNow(ada, t0 + hours(2)), a.UsageNow(kAda, t0 + hours(2)));
  a.StopHolding(JobId(7), t0 + hours(2));
  a.StopHolding(JobId(4), t0 + hours(2));
  EXPECT_EQ(a.UsageNow(ada, t0 + hours(3)), a.UsageNow(kAda, t0 + hours(3)));
  EXPECT_GT(a.UsageNow(ada, t0 + hours(3)), 0.0) << "closed usage, decayed";

  // A user numbered, then loaded from the store: the number reads the stored record.
  const uint32_t bob = a.UserNumber(kBob);
  UserRecord stored;
  stored.name = kBob;
  stored.decayed_core_hours = 6;
  stored.usage_as_of = t0;
  a.Load({stored});
  EXPECT_DOUBLE_EQ(a.UsageNow(bob, t0 + hours(1)), 3.0);
  EXPECT_EQ(a.UsageNow(bob, t0 + hours(1)), a.UsageNow(kBob, t0 + hours(1)));
  EXPECT_EQ(a.UserNumber(kBob), bob) << "a number is kept";
}

TEST(AccountingTest, ChangedUsersAreReportedOnceInNameOrder) {
  Accounting a = Make();
  UserRecord stored;
  stored.name = kBob;
  stored.quota = Quota{1, 2};
  a.Load({stored});
  EXPECT_TRUE(a.TakeChanged().empty()) << "loaded rows are not changes";
  EXPECT_EQ(a.QuotaOf(kBob), (Quota{1, 2}));
  EXPECT_EQ(a.QuotaOf(kAda), (Quota{40, 800})) << "the default quota";

  a.User(UserName("zed"), t0);
  a.SetQuota(kBob, Quota{3, 4}, t0);
  a.User(kBob, t0);  // known: no change
  a.StartHolding(JobId(1), kAda, true, 8, t0);
  a.StopHolding(JobId(1), t0 + hours(1));  // usage changed, user created
  const std::vector<UserRecord> changed = a.TakeChanged();
  ASSERT_EQ(changed.size(), 3u);
  EXPECT_EQ(changed[0].name, kAda);
  EXPECT_DOUBLE_EQ(changed[0].decayed_core_hours, 8.0);
  EXPECT_EQ(changed[1].name, kBob);
  EXPECT_EQ(changed[1].quota, (Quota{3, 4}));
  EXPECT_EQ(changed[2].name, UserName("zed"));
  EXPECT_TRUE(a.TakeChanged().empty());
}

TEST(AccountingTest, TheCreationBudgetRefillsAtItsHourlyRate) {
  Accounting a = Make(/*per_hour=*/10);
  EXPECT_EQ(a.SecondsUntilCreation(kAda, 10, t0), 0.0);
  EXPECT_EQ(a.CreationsAvailable(kAda, t0), 10.0);
  EXPECT_TRUE(std::isinf(a.SecondsUntilCreation(kAda, 11, t0))) << "never: more than an hour's";
  a.ChargeCreation(kAda, 10, t0);
  EXPECT_EQ(a.CreationsAvailable(kAda, t0), 0.0);
  EXPECT_NEAR(a.SecondsUntilCreation(kAda, 1, t0), 360.0, 1e-6);
  EXPECT_NEAR(a.CreationsAvailable(kAda, t0 + minutes(30)), 5.0, 1e-9);
  EXPECT_EQ(a.SecondsUntilCreation(kBob, 10, t0), 0.0) << "budgets are per user";
}

}  // namespace
}  // namespace podsched::core
