// Encodings of the nested fields the job database stores but never queries.
//
// The spec is stored as CBOR (nlohmann-json's binary JSON): command, args and env are opaque
// bytes that need not be UTF-8, which JSON text cannot carry exactly. Host lists of events are
// JSON text arrays ("[0,1,8,9]") so SQLite's json_each can read them in queries and migrations.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "scheduler/core/job.h"

namespace podsched::jobdb {

std::string EncodeSpec(const core::JobSpec& spec);
// Errors (kDataLoss) on bytes that are not an encoded spec.
Result<core::JobSpec> DecodeSpec(std::string_view bytes);

// A multislice job's slices after the first: JSON text [{"pod":"a","row":0,"col":2,"rows":2,
// "cols":2}], the pod by name ("pod" absent: the one pod of a store that names no pods).
struct StoredSlice {
  std::optional<std::string> pod;
  pod::Placement rect;
};
std::string EncodeSlices(const std::vector<StoredSlice>& slices);
// Errors (kDataLoss) name what is wrong.
Result<std::vector<StoredSlice>> DecodeSlices(std::string_view json);

// An event's other slices: JSON text [{"pod":"b","hosts":[0,1,4,5]}].
std::string EncodeEventSlices(const std::vector<core::JobEvent::Slice>& slices);
Result<std::vector<core::JobEvent::Slice>> DecodeEventSlices(std::string_view json);

std::string EncodeHosts(const std::vector<HostId>& hosts);
Result<std::vector<HostId>> DecodeHosts(std::string_view json);

}  // namespace podsched::jobdb
