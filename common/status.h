// Status and Result<T>: how podsched reports expected failures.
//
// A Status is either OK or carries a code and a message written for the person who will read it
// ("v2-12 is not an accelerator type; valid: v2-8, v2-32, ..."). Result<T> is std::expected<T,
// Status>. Broken invariants are not Statuses: they abort through PODSCHED_CHECK (check.h).
//
// Thread safety: value types; safe to copy between threads.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace podsched {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's input is wrong; retrying will not help
  kNotFound,           // the named thing does not exist (or is not visible to the caller)
  kAlreadyExists,      //
  kFailedPrecondition, // the system is not in a state where the call can succeed
  kResourceExhausted,  // a quota, a size bound or a rate limit was hit
  kPermissionDenied,   //
  kUnauthenticated,    //
  kUnavailable,        // transient: the peer or the service did not answer; retry may help
  kDataLoss,           // stored bytes are corrupt (checksum mismatch, torn write)
  kInternal,           // a bug or an unexpected failure of a dependency
};

// Stable lower-case name of a code ("invalid_argument"), used in API errors and logs.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid_argument: v2-12 is not an accelerator type; ..." or "ok".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context + ": "`.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
using Result = std::expected<T, Status>;

// Shorthands that read well at a return site: `return InvalidArgument("...")`.
inline std::unexpected<Status> Error(StatusCode code, std::string message) {
  return std::unexpected<Status>(Status(code, std::move(message)));
}
inline std::unexpected<Status> InvalidArgument(std::string message) {
  return Error(StatusCode::kInvalidArgument, std::move(message));
}
inline std::unexpected<Status> NotFound(std::string message) {
  return Error(StatusCode::kNotFound, std::move(message));
}
inline std::unexpected<Status> FailedPrecondition(std::string message) {
  return Error(StatusCode::kFailedPrecondition, std::move(message));
}
inline std::unexpected<Status> Unavailable(std::string message) {
  return Error(StatusCode::kUnavailable, std::move(message));
}
inline std::unexpected<Status> DataLoss(std::string message) {
  return Error(StatusCode::kDataLoss, std::move(message));
}
inline std::unexpected<Status> Internal(std::string message) {
  return Error(StatusCode::kInternal, std::move(message));
}

// Converts an unexpected<Status> (as returned above) to a plain Status, for functions that
// return Status rather than Result<T>: `return ToStatus(InvalidArgument("..."))`.
inline Status ToStatus(std::unexpected<Status> u) { return std::move(u).error(); }

}  // namespace podsched
