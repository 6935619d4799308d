#include "scheduler/daemon/agent_registry.h"

#include <gtest/gtest.h>

#include "scheduler/core/test_util.h"

namespace podsched::daemon {
namespace {

using core::testing::At;

AgentInfo Info(std::string id) {
  AgentInfo a;
  a.agent_id = std::move(id);
  a.pod = "pod0";
  a.rsh_endpoint = "tcp://" + a.agent_id + ":1";
  return a;
}

TEST(AgentRegistryTest, HostsWithoutAnAgentHaveNoAgentReason) {
  AgentRegistry r(4);
  EXPECT_EQ(r.DesiredReason(HostId(0), /*require_agents=*/true), "no agent");
  EXPECT_EQ(r.DesiredReason(HostId(0), /*require_agents=*/false), "");
  std::vector<HostId> released;
  r.Register(Info("a"), {HostId(0), HostId(1)}, At(1), &released);
  EXPECT_EQ(r.DesiredReason(HostId(0), true), "");
  EXPECT_EQ(r.hosts()[1].agent_id, "a");
  EXPECT_EQ(r.connected_agents(), 1);
}

TEST(AgentRegistryTest, ReRegisteringMovesHostsAndReleasesTheOnesNoLongerServed) {
  AgentRegistry r(4);
  std::vector<HostId> released;
  r.Register(Info("a"), {HostId(0), HostId(1)}, At(1), &released);
  EXPECT_TRUE(released.empty());
  r.Register(Info("a"), {HostId(1), HostId(2)}, At(2), &released);
  EXPECT_EQ(released, std::vector<HostId>{HostId(0)});
  EXPECT_EQ(r.hosts()[0].agent_id, "");
  EXPECT_EQ(r.agents().at("a").hosts, (std::vector<HostId>{HostId(1), HostId(2)}));
  // A live agent's host cannot be claimed; a silent one's can, and it loses it.
  EXPECT_TRUE(r.ClaimedByOther("b", HostId(2)));
  EXPECT_FALSE(r.ClaimedByOther("a", HostId(2)));
  EXPECT_EQ(r.ExpireSilent(At(10), std::chrono::seconds(5)),
            (std::vector<HostId>{HostId(1), HostId(2)}));
  EXPECT_EQ(r.DesiredReason(HostId(2), true), "heartbeat lost");
  EXPECT_EQ(r.FindConnected("a"), nullptr);
  EXPECT_FALSE(r.ClaimedByOther("b", HostId(2)));
  r.Register(Info("b"), {HostId(2)}, At(11), &released);
  EXPECT_EQ(r.agents().at("a").hosts, std::vector<HostId>{HostId(1)});
  EXPECT_TRUE(r.Serves(*r.FindConnected("b"), HostId(2)));
  EXPECT_FALSE(r.Serves(*r.FindConnected("b"), HostId(9)));  // not in the pod
}

TEST(AgentRegistryTest, FanOutReachesEachAgentOnceAndKnowsTheirEndpoints) {
  AgentRegistry r(8);
  std::vector<HostId> released;
  r.Register(Info("b"), {HostId(4), HostId(5)}, At(1), &released);
  r.Register(Info("a"), {HostId(0), HostId(1)}, At(1), &released);
  const std::vector<HostId> slice{HostId(0), HostId(1), HostId(4), HostId(5), HostId(6)};
  EXPECT_EQ(r.AgentsServing(slice), (std::vector<std::string>{"a", "b"}));
  auto eps = r.RshEndpoints(slice);
  EXPECT_EQ(eps.size(), 4u);  // host 6 has no agent
  EXPECT_EQ(eps.at(HostId(4)), "tcp://b:1");
}

TEST(AgentRegistryTest, UnwantedProcessesKeepTheHostDownUntilGone) {
  AgentRegistry r(4);
  std::vector<HostId> released;
  r.Register(Info("a"), {HostId(0)}, At(1), &released);
  const JobEpoch ghost{JobId(5), 2};
  EXPECT_TRUE(r.NoteUnwanted(HostId(0), ghost, /*first_report=*/true));
  EXPECT_EQ(r.DesiredReason(HostId(0), true), "stale processes");
  EXPECT_TRUE(r.NoteUnwanted(HostId(0), ghost, false));  // still there
  EXPECT_FALSE(r.NoteUnwanted(HostId(0), JobEpoch{JobId(6), 1}, false));  // not recorded later
  r.ClearUnwanted(HostId(0));
  EXPECT_EQ(r.DesiredReason(HostId(0), true), "");
}

}  // namespace
}  // namespace podsched::daemon
