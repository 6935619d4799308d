// Where a user's checkpoints may go (docs/jobspec.md, "Checkpoints"): every user has a prefix
// of the checkpoint store, `<default_checkpoint_url>/users/<user>`, and a job's checkpoint URL
// (the spec's checkpoint_url, or POD_CHECKPOINT_URL in its env) must be that prefix or lie
// below it. Checked lexically at submit: no `.`/`..`/empty segments, no percent-encoding or
// backslashes, the same scheme, bucket and query (an s3:// URL's endpoint and region) as the
// store. What a symlink inside the prefix points at is the file system's business: jobs run as
// their users' accounts (podworker), so a link to another user's prefix meets that prefix's
// 0700 permissions.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace podsched::daemon {

// `store_url` with `/users/<user>` appended to its path (before any query).
std::string UserCheckpointPrefix(std::string_view store_url, std::string_view user);

// Ok when `url` is `prefix` or below it; kPermissionDenied (outside) or kInvalidArgument
// (malformed) with the reason and the prefix otherwise.
Status CheckUnderPrefix(std::string_view url, std::string_view prefix);

// The directory of a file:// URL without its query ("" for other schemes).
std::string FileUrlDirectory(std::string_view url);

}  // namespace podsched::daemon
