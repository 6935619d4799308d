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

}  // namespace podsched::daemon
