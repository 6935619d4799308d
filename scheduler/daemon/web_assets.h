// WebAssets: the dashboard's static files, served by podsched on the API's port.
//
// Files come from two places only:
//   <web_root>/static/<path>    the dashboard itself ("/" is static/index.html)
//   /vendor/<name>              an allow-list of files from <web_root>/node_modules (npm packages
//                               installed by `npm ci`), e.g. /vendor/uPlot.esm.js
// A request path must be made of segments of [A-Za-z0-9_-][A-Za-z0-9._-]* (so no "..", no ".",
// no hidden files, no empty segment, no backslash or percent sign after decoding), have a known
// extension (which gives the Content-Type) and resolve (after symlinks) to a regular file inside
// <web_root>/static. Anything else is 400 (bad path) or 404. Every response carries the
// dashboard's security headers (Content-Security-Policy without inline scripts, nosniff, no
// framing, no referrer).
//
// Files are read on each request (small; the browser caches with revalidation off: no-cache).
// Thread-safe (immutable after construction; reads files only).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/daemon/http_types.h"

namespace podsched::daemon {

// Headers every dashboard response carries (static files, login, logout).
const std::vector<std::pair<std::string, std::string>>& DashboardSecurityHeaders();

// Content-Type for a file name by extension; empty if the extension is not served.
std::string_view ContentTypeFor(std::string_view name);

// True if `path` (decoded, starting with '/') has only safe segments (see above).
bool IsSafeWebPath(std::string_view path);

class WebAssets {
 public:
  // `web_root` empty: the dashboard is disabled and every page answers 404 with a note.
  explicit WebAssets(std::string web_root);
  const std::string& root() const { return root_; }
  // Answers GET `path` (already percent-decoded; `raw_target` is the undecoded request target,
  // checked for encoded separators).
  HttpResponse Serve(std::string_view method, std::string_view path,
                     std::string_view raw_target) const;

 private:
  std::string root_;
  std::string static_dir_;  // canonical <root>/static, "" if missing
};

}  // namespace podsched::daemon
