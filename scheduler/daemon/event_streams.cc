#include "scheduler/daemon/event_streams.h"

#include <algorithm>

#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"
#include "scheduler/daemon/visibility.h"

namespace podsched::daemon {

int64_t EventStreams::Open(Principal who, SendFrame send, std::string session) {
  int64_t id = next_stream_++;
  streams_[id] = Stream{std::move(who), std::move(send), std::move(session)};
  return id;
}

size_t EventStreams::CountOf(std::string_view user) const {
  return static_cast<size_t>(std::count_if(streams_.begin(), streams_.end(), [&](const auto& kv) {
    return kv.second.who.user == user;
  }));
}

void EventStreams::Close(int64_t stream) { streams_.erase(stream); }

size_t EventStreams::CloseWhere(const EndReason& why) {
  size_t closed = 0;
  for (auto it = streams_.begin(); it != streams_.end();) {
    std::optional<std::string> message = why(it->second.who, it->second.session);
    if (!message) {
      ++it;
      continue;
    }
    it->second.send("event: end\ndata: " + ErrorJson("unauthenticated", *message) + "\n\n");
    it->second.send("");
    it = streams_.erase(it);
    ++closed;
  }
  return closed;
}

void EventStreams::PublishTransition(const core::JobEvent& e, const core::JobRecord& job,
                                     const pod::Fleet& pod, const pod::AcceleratorType* accelerator,
                                     TimePoint now) {
  if (streams_.empty()) {
    ++next_event_id_;
    return;
  }
  api::StreamEvent se;
  *se.mutable_event() = EventToProto(e);
  Broadcast("job", se, job, pod, accelerator, now);
}

void EventStreams::PublishProgress(const ProgressSample& sample, const core::JobRecord& job,
                                   const pod::Fleet& pod, const pod::AcceleratorType* accelerator,
                                   TimePoint now) {
  if (streams_.empty()) return;
  api::StreamEvent se;
  *se.mutable_progress() = ProgressToProto(sample);
  Broadcast("progress", se, job, pod, accelerator, now);
}

void EventStreams::Broadcast(std::string_view type, api::StreamEvent& se,
                             const core::JobRecord& job, const pod::Fleet& pod,
                             const pod::AcceleratorType* accelerator, TimePoint now) {
  se.set_id(next_event_id_++);
  se.set_type(std::string(type));
  *se.mutable_job() = JobToProto(job, pod, accelerator, now, false);
  const std::string frame = "id: " + std::to_string(se.id()) + "\nevent: " + std::string(type) +
                            "\ndata: " + ToJson(se) + "\n\n";
  for (auto& [id, stream] : streams_) {
    if (MaySee(stream.who, job)) stream.send(frame);
  }
}

}  // namespace podsched::daemon
