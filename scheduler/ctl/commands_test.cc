#include "scheduler/ctl/commands.h"

#include <gtest/gtest.h>

#include <sstream>

#include "scheduler/ctl/terminal_text.h"

namespace podsched::ctl {
namespace {

TEST(JsonToYaml, Converts) {
  std::string y = JsonToYaml(R"({"jobs":[{"id":"3","state":"QUEUED","preemptible":true}]})");
  EXPECT_NE(y.find("jobs:"), std::string::npos);
  EXPECT_NE(y.find("state: QUEUED"), std::string::npos);
  EXPECT_NE(y.find("preemptible: true"), std::string::npos);
}

TEST(JobsTable, OneRowPerJob) {
  api::JobList list;
  auto* j = list.add_jobs();
  j->set_id(42);
  j->set_name("resnet");
  j->set_user("alice");
  j->set_accelerator("v2-32");
  j->set_state("QUEUED");
  j->set_cost_usd(1.5);
  j->set_reason("quota: 40/40 on-demand cores");
  std::string t = JobsTable(list);
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 2);
  EXPECT_NE(t.find("42"), std::string::npos);
  EXPECT_NE(t.find("$1.50"), std::string::npos);
  EXPECT_NE(t.find("quota: 40/40"), std::string::npos);
}

TEST(PodPicture, DrawsAllocationsAndHiddenOnes) {
  api::Pod p;
  p.set_name("pod0");
  p.set_generation("v2");
  p.set_host_rows(2);
  p.set_host_cols(4);
  for (int i = 0; i < 8; ++i) {
    auto* h = p.add_hosts();
    h->set_id(i);
    h->set_healthy(i != 7);
  }
  auto* a = p.add_allocations();
  a->set_job_id(1);
  a->set_user("alice");
  a->set_accelerator("v2-32");
  a->set_preemptible(true);
  a->mutable_placement()->set_rows(2);
  a->mutable_placement()->set_cols(2);
  auto* other = p.add_allocations();  // someone else's: no job id
  other->mutable_placement()->set_row(0);
  other->mutable_placement()->set_col(2);
  other->mutable_placement()->set_rows(1);
  other->mutable_placement()->set_cols(1);
  std::string pic = PodPicture(p, false);
  EXPECT_NE(pic.find("a a # ."), std::string::npos) << pic;
  EXPECT_NE(pic.find("a a . X"), std::string::npos) << pic;
  EXPECT_NE(pic.find("job 1 alice v2-32 preemptible"), std::string::npos);
  EXPECT_NE(pic.find("other users"), std::string::npos);
  EXPECT_EQ(pic.find("\x1b["), std::string::npos);
  EXPECT_NE(PodPicture(p, true).find("\x1b["), std::string::npos);
}

// Two slices of one multislice job in one pod: both drawn with the job's label, listed once.
TEST(PodPicture, DrawsEverySliceOfAJobInThePodUnderItsLabel) {
  api::Pod p;
  p.set_name("pod0");
  p.set_generation("v2");
  p.set_host_rows(1);
  p.set_host_cols(4);
  for (int i = 0; i < 4; ++i) {
    auto* h = p.add_hosts();
    h->set_id(i);
    h->set_healthy(true);
  }
  for (int slice = 0; slice < 2; ++slice) {
    auto* a = p.add_allocations();
    a->set_job_id(1);
    a->set_user("alice");
    a->set_accelerator("v2-8");
    a->set_slice(slice);
    a->mutable_placement()->set_col(slice * 2);
    a->mutable_placement()->set_rows(1);
    a->mutable_placement()->set_cols(1);
  }
  const std::string pic = PodPicture(p, false);
  EXPECT_NE(pic.find("A . A ."), std::string::npos) << pic;
  const size_t first = pic.find("job 1 alice");
  ASSERT_NE(first, std::string::npos) << pic;
  EXPECT_EQ(pic.find("job 1 alice", first + 1), std::string::npos) << pic;
}

TEST(PodPicture, ListsUnhealthyHostsByReason) {
  api::Pod p;
  p.set_name("pod0");
  p.set_generation("v2");
  p.set_host_rows(2);
  p.set_host_cols(4);
  for (int i = 0; i < 8; ++i) {
    auto* h = p.add_hosts();
    h->set_id(i);
    h->set_healthy(i < 4);
    if (i >= 4) h->set_health_reason(i == 6 ? "heartbeat lost" : "no agent");
  }
  std::string pic = PodPicture(p, false);
  EXPECT_NE(pic.find("X  no agent: hosts 4-5,7"), std::string::npos) << pic;
  EXPECT_NE(pic.find("X  heartbeat lost: hosts 6"), std::string::npos) << pic;
}

// One line per pod with its zone, grid, hosts free and held by class, unhealthy hosts and the jobs
// waiting for it; a total that does not sum the waiting jobs (one waits in every pod it fits).
TEST(FleetTable, OneLinePerPodAndATotal) {
  api::PodList list;
  auto add = [&](const std::string& name, const std::string& zone, int rows, int cols, int free,
                 int od, int pre, int down, int waiting) {
    api::Pod* p = list.add_pods();
    p->set_name(name);
    p->set_zone(zone);
    p->set_generation("v2");
    p->set_host_rows(rows);
    p->set_host_cols(cols);
    for (int i = 0; i < rows * cols; ++i) p->add_hosts()->set_healthy(i >= down);
    p->set_available_hosts(free);
    p->set_on_demand_hosts(od);
    p->set_preemptible_hosts(pre);
    p->set_pending_total(waiting);
    if (free > 0) p->set_largest_placeable_type("v2-8");
  };
  add("big", "us-central1-b", 8, 8, 48, 8, 4, 4, 3);
  add("dev-000", "", 1, 1, 0, 0, 1, 0, 7);
  list.mutable_pods(1)->set_job_class("preemptible");
  const std::string table = FleetTable(list);
  std::istringstream lines(table);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u) << table;
  EXPECT_EQ(rows[0].rfind("POD", 0), 0u);
  EXPECT_NE(rows[1].find("us-central1-b"), std::string::npos);
  EXPECT_NE(rows[1].find("v2 8x8"), std::string::npos);
  EXPECT_NE(rows[2].find("dev-000"), std::string::npos);
  EXPECT_NE(rows[2].find("none"), std::string::npos) << "nothing free on the device";
  EXPECT_NE(rows[1].find("any"), std::string::npos) << table;
  EXPECT_NE(rows[2].find("preemptible"), std::string::npos) << table;
  EXPECT_NE(PodPicture(list.pods(1), false).find("(v2, 1x1 hosts, preemptible jobs only)"),
            std::string::npos)
      << PodPicture(list.pods(1), false);
  // 65 hosts, 48 free, 8 + 0 on-demand, 4 + 1 preemptible, 4 unhealthy.
  EXPECT_NE(rows[3].find("total (2 pods)"), std::string::npos);
  std::istringstream total(rows[3].substr(rows[3].find(')') + 1));
  std::vector<std::string> cells;
  for (std::string cell; total >> cell;) cells.push_back(cell);
  EXPECT_EQ(cells, (std::vector<std::string>{"65", "48", "8", "5", "4"}));
}

// A job's output and reasons are its program's bytes: podctl must not pass terminal control
// sequences on (an escape that clears the screen, retitles the window, fakes a prompt).
TEST(TerminalSafeTest, ControlCharactersAreShownNotObeyed) {
  EXPECT_EQ(TerminalSafe("\x1b]0;owned\x07step 5\x1b[2J"), "\\x1b]0;owned\\x07step 5\\x1b[2J");
  EXPECT_EQ(TerminalSafe("a\tb\rc\x7f"), "a\tb\\x0dc\\x7f");
  EXPECT_EQ(TerminalSafe("\xc2\x9b" "31m"), "\\xc2\\x9b31m");            // C1 CSI as UTF-8
  EXPECT_EQ(TerminalSafe("loss 0.5 \xc3\xa9t\xc3\xa9 \xe2\x9c\x93"), "loss 0.5 \xc3\xa9t\xc3\xa9 \xe2\x9c\x93");
}

}  // namespace
}  // namespace podsched::ctl
