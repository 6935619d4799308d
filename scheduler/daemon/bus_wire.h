// Small facts about the bus's wire types that BusLogic and its parts share. Pure.
#pragma once

#include <string_view>

#include "bus.pb.h"
#include "common/ids.h"
#include "pod/fleet.h"

namespace podsched::daemon {

inline JobEpoch FromProto(const bus::JobEpoch& je) {
  return JobEpoch{JobId(je.job_id()), je.epoch()};
}
inline void ToProto(JobEpoch je, bus::JobEpoch* out) {
  out->set_job_id(je.job.value());
  out->set_epoch(je.epoch);
}
// "register", "heartbeat", ... (the type label of podsched_bus_messages_total); "none" if unset.
std::string_view TypeName(bus::Envelope::BodyCase c);
// 1..64 characters of [A-Za-z0-9._-] (docs/bus.md "Conversation").
bool ValidAgentId(std::string_view id);

// An agent names hosts by its pod's own ids (0 .. the pod's hosts - 1), podsched by the fleet's
// (pod/fleet.h). Rewrites every host an agent's message names (Register, Heartbeat, Exited) to
// the fleet's ids of pod `pod_index`; an id that pod does not have becomes -1, which no agent
// serves and no slice contains. (Launch goes the other way: LaunchPlan::pod_hosts.)
void AgentHostsToFleet(const pod::Fleet& fleet, int pod_index, bus::Envelope& e);

}  // namespace podsched::daemon
