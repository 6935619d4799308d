// podctl's verbs. Each returns the process exit code (client.h) and prints errors as one line on
// stderr ("podctl: ...").
#pragma once

#include <string>
#include <vector>

#include "api.pb.h"
#include "scheduler/ctl/client.h"
#include "scheduler/ctl/submit_flags.h"

namespace podsched::ctl {

struct JobsOptions {
  bool all = false;
  std::string state;
  std::string output = "table";  // table, json, yaml
  std::string user;
  std::string array;  // only the tasks of this array
  int limit = 0;      // 0: every page (with history: kHistoryLimit)
  bool history = false;  // also the ended jobs only the store keeps (older than the retention)
  bool watch = false; // redraw when the list changes, until Ctrl-C
};

int Submit(ApiClient& api, const SubmitOptions& o);
int Jobs(ApiClient& api, const JobsOptions& o);
int Describe(ApiClient& api, const std::string& job, const std::string& output);
int Cancel(ApiClient& api, const std::string& job);
int Preempt(ApiClient& api, const std::string& job);
int Events(ApiClient& api, const std::string& job, const std::string& output);
int Logs(ApiClient& api, const std::string& job, bool follow);
int Wait(ApiClient& api, const std::string& job, bool quiet);
int ShowPod(ApiClient& api, const std::string& pod, bool color);
// `podctl fleet`: one line per pod of the fleet and a total (or the PodList as json/yaml).
int Fleet(ApiClient& api, const std::string& output);
int Quota(ApiClient& api, const std::string& output);
int Agents(ApiClient& api, const std::string& output);

// Formatting helpers (pure; unit-tested).
std::string JsonToYaml(const std::string& json);
std::string JobsTable(const api::JobList& list);
std::string PodPicture(const api::Pod& pod, bool color);
std::string FleetTable(const api::PodList& list);
// Whether `job` names a job as users write it: an id, or ARRAYID_INDEX for an array task.
bool ValidJobArg(const std::string& job);
// "0-3,8,12-15".
std::string HostRanges(const google::protobuf::RepeatedField<int32_t>& hosts);

}  // namespace podsched::ctl
