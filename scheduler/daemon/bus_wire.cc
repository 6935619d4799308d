#include "scheduler/daemon/bus_wire.h"

#include <algorithm>
#include <cctype>

namespace podsched::daemon {

std::string_view TypeName(bus::Envelope::BodyCase c) {
  switch (c) {
    case bus::Envelope::kRegister: return "register";
    case bus::Envelope::kHeartbeat: return "heartbeat";
    case bus::Envelope::kLaunch: return "launch";
    case bus::Envelope::kPreempt: return "preempt";
    case bus::Envelope::kKill: return "kill";
    case bus::Envelope::kProgress: return "progress";
    case bus::Envelope::kExited: return "exited";
    case bus::Envelope::kWelcome: return "welcome";
    case bus::Envelope::kReregister: return "reregister";
    case bus::Envelope::kAck: return "ack";
    case bus::Envelope::kLog: return "log";
    case bus::Envelope::BODY_NOT_SET: break;
  }
  return "none";
}

bool ValidAgentId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

void AgentHostsToFleet(const pod::Fleet& fleet, int pod_index, bus::Envelope& e) {
  const pod::Pod& pod = fleet.pod(pod_index);
  auto to_fleet = [&](google::protobuf::RepeatedField<int32_t>* hosts) {
    for (int32_t& h : *hosts) {
      h = pod.Contains(HostId(h)) ? fleet.FleetHost(pod_index, HostId(h)).value() : -1;
    }
  };
  auto running = [&](google::protobuf::RepeatedPtrField<bus::RunningJob>* jobs) {
    for (bus::RunningJob& r : *jobs) {
      to_fleet(r.mutable_hosts());
      to_fleet(r.mutable_ranks_up_hosts());
    }
  };
  auto exits = [&](google::protobuf::RepeatedPtrField<bus::Exited>* exited) {
    for (bus::Exited& x : *exited) to_fleet(x.mutable_hosts());
  };
  switch (e.body_case()) {
    case bus::Envelope::kRegister:
      to_fleet(e.mutable_register_()->mutable_hosts());
      running(e.mutable_register_()->mutable_running());
      exits(e.mutable_register_()->mutable_unacked_exits());
      break;
    case bus::Envelope::kHeartbeat:
      running(e.mutable_heartbeat()->mutable_running());
      exits(e.mutable_heartbeat()->mutable_unacked_exits());
      break;
    case bus::Envelope::kExited:
      to_fleet(e.mutable_exited()->mutable_hosts());
      break;
    default:  // Progress and Log name no host; the rest go the other way
      break;
  }
}

}  // namespace podsched::daemon
