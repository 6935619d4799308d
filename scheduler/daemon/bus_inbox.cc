#include "scheduler/daemon/bus_inbox.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <limits>

#include "bus.pb.h"

namespace podsched::daemon {

BusLane LaneOf(std::string_view bytes) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  // The body is a oneof: of several fields the last one wins, as in a parse. Only what a parse
  // takes as the body counts: a field of the oneof, length-delimited (another number, or that
  // number with another wire type, is an unknown field to the parser and leaves the body as it
  // was; found by the bus_lane fuzz target's oracle).
  const google::protobuf::OneofDescriptor* oneof =
      bus::Envelope::descriptor()->FindOneofByName("body");
  int body = 0;
  while (uint32_t tag = in.ReadTag()) {
    if (!WireFormatLite::SkipField(&in, tag)) return BusLane::kData;
    const int number = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
    const auto* field = bus::Envelope::descriptor()->FindFieldByNumber(number);
    if (field != nullptr && field->containing_oneof() == oneof &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      body = number;
    }
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(bytes.size())) {
    return BusLane::kData;
  }
  switch (body) {
    case bus::Envelope::kRegister:
    case bus::Envelope::kHeartbeat:
    case bus::Envelope::kExited:
      return BusLane::kControl;
    default:
      return BusLane::kData;
  }
}

bool BusInbox::Push(Message m, bool* wake) {
  const BusLane lane = m.well_framed ? LaneOf(m.bytes) : BusLane::kData;
  const int64_t cost =
      static_cast<int64_t>(m.bytes.size() + m.agent_id.size()) + kOverheadBytes;
  std::lock_guard lock(mu_);
  *wake = false;
  if (lane == BusLane::kControl) {
    if (control_bytes_ + cost > limits_.control_bytes) {
      ++dropped_control_;
      return false;
    }
    control_bytes_ += cost;
  } else {
    auto it = queues_.find(m.agent_id);
    const int64_t agent_data = it == queues_.end() ? 0 : it->second.data_bytes;
    if (data_bytes_ + cost > limits_.data_bytes ||
        agent_data + cost > limits_.data_bytes_per_agent) {
      ++dropped_data_;
      return false;
    }
    data_bytes_ += cost;
  }
  Queue& q = queues_[m.agent_id];
  if (lane == BusLane::kData) q.data_bytes += cost;
  q.entries.push_back(Entry{std::move(m), lane, cost});
  if (!taking_) {
    taking_ = true;
    *wake = true;
  }
  return true;
}

std::vector<BusInbox::Message> BusInbox::TakeTurn() {
  std::lock_guard lock(mu_);
  std::vector<Message> turn = TakeLocked(limits_.turn_bytes);
  if (turn.empty()) taking_ = false;
  return turn;
}

std::vector<BusInbox::Message> BusInbox::TakeAll() {
  std::lock_guard lock(mu_);
  return TakeLocked(std::numeric_limits<int64_t>::max());
}

std::vector<BusInbox::Message> BusInbox::TakeLocked(int64_t bytes_per_agent) {
  std::vector<Message> turn;
  for (auto it = queues_.begin(); it != queues_.end();) {
    Queue& q = it->second;
    int64_t taken = 0;
    while (!q.entries.empty() &&
           (taken == 0 || q.entries.front().cost <= bytes_per_agent - taken)) {
      Entry& e = q.entries.front();
      taken += e.cost;
      if (e.lane == BusLane::kControl) {
        control_bytes_ -= e.cost;
      } else {
        data_bytes_ -= e.cost;
        q.data_bytes -= e.cost;
      }
      turn.push_back(std::move(e.message));
      q.entries.pop_front();
    }
    it = q.entries.empty() ? queues_.erase(it) : std::next(it);
  }
  return turn;
}

int64_t BusInbox::dropped_data() const {
  std::lock_guard lock(mu_);
  return dropped_data_;
}
int64_t BusInbox::dropped_control() const {
  std::lock_guard lock(mu_);
  return dropped_control_;
}
int64_t BusInbox::queued_bytes() const {
  std::lock_guard lock(mu_);
  return control_bytes_ + data_bytes_;
}

}  // namespace podsched::daemon
