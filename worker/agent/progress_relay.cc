#include "worker/agent/progress_relay.h"

#include "common/hash.h"
#include "common/rank_tag.h"
#include "worker/agent/exit_verdict.h"

namespace podsched::agent {

std::optional<Rejection> CheckProgressDatagram(const progress::Progress& p,
                                               const std::string* launch_key) {
  const std::string named = "progress of job '" + p.job.substr(0, 32) + "' epoch " +
                            std::to_string(p.epoch);
  if (launch_key == nullptr) return Rejection{"progress_other_job", named + " does not run here"};
  if (!ConstantTimeEqual(p.key, *launch_key)) {
    return Rejection{"progress_bad_key",
                     named + " without its " + std::string(progress::kProgressKeyVariable)};
  }
  return std::nullopt;
}

bus::Envelope ProgressEnvelope(const JobEpoch& je, const progress::Progress& p,
                               int64_t* last_checkpoint_step) {
  if (const int64_t step = progress::ReportedCheckpointStep(p); step > 0) {
    *last_checkpoint_step = step;
  }
  bus::Envelope env;
  auto* pr = env.mutable_progress();
  pr->mutable_job()->set_job_id(je.job.value());
  pr->mutable_job()->set_epoch(je.epoch);  // from the Launch, never from the report
  pr->set_step(p.step);
  pr->set_loss(p.loss);
  pr->set_accuracy(p.accuracy);
  pr->set_examples_per_second(p.examples_per_s);
  pr->set_last_checkpoint_step(*last_checkpoint_step);
  pr->set_total_steps(p.steps);
  for (const auto& [name, value] : p.scalars) (*pr->mutable_scalars())[name] = value;
  return env;
}

OutputLine JudgeOutputLine(std::string_view line) {
  OutputLine out;
  const RankTag tag = ParseRankTag(line);
  if (tag.length == 0) {
    // A harmless race inside mpirun's rsh launch, printed for every job (docs/podworker.md).
    out.keep = line.find("plm:rsh: Warning: setpgid(") == std::string_view::npos;
    return out;
  }
  const std::string_view text = line.substr(tag.length);
  if (tag.rank == 0 && !tag.stderr_stream && text.starts_with(progress::kProgressLinePrefix)) {
    out.progress = progress::ParseProgressLine(text);
  }
  out.rank_preempted = tag.stderr_stream && text.ends_with(kRankPreemptedLine);
  return out;
}

}  // namespace podsched::agent
