#include "scheduler/daemon/web_assets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace fs = std::filesystem;
namespace {

// npm files the dashboard may load, by the name it uses under /vendor/ (no CDN at run time).
const std::map<std::string, std::string, std::less<>>& VendorFiles() {
  static const auto* files = new std::map<std::string, std::string, std::less<>>{
      {"uPlot.esm.js", "node_modules/uplot/dist/uPlot.esm.js"},
      {"uPlot.min.css", "node_modules/uplot/dist/uPlot.min.css"},
  };
  return *files;
}

HttpResponse WebError(int status, std::string_view code, std::string message) {
  HttpResponse r;
  r.status = status;
  r.body = ErrorJson(code, message);
  r.headers = DashboardSecurityHeaders();
  return r;
}

bool IsSegmentChar(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  if (c == '_' || c == '-') return true;
  return c == '.' && !first;
}

// True if `path` is `dir` or inside it (both canonical).
bool Inside(const fs::path& path, const fs::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return d == dir.end();
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& DashboardSecurityHeaders() {
  static const auto* headers = new std::vector<std::pair<std::string, std::string>>{
      // Scripts and styles only from files we serve: no inline script, no eval, no CDN.
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-cache"},
  };
  return *headers;
}

std::string_view ContentTypeFor(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> kTypes = {
      {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},              {".png", "image/png"},
      {".ico", "image/x-icon"},               {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
  };
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || name.find('/', dot) != std::string_view::npos) return {};
  auto it = kTypes.find(name.substr(dot));
  return it == kTypes.end() ? std::string_view() : std::string_view(it->second);
}

bool IsSafeWebPath(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.size() > 256) return false;
  if (path == "/") return true;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view seg = path.substr(i, j - i);
    if (seg.empty()) return false;  // "//" or a trailing slash
    for (size_t k = 0; k < seg.size(); ++k) {
      if (!IsSegmentChar(seg[k], k == 0)) return false;
    }
    i = j + 1;
  }
  return true;
}

WebAssets::WebAssets(std::string web_root) : root_(std::move(web_root)) {
  if (root_.empty()) return;
  std::error_code ec;
  fs::path dir = fs::canonical(fs::path(root_) / "static", ec);
  if (!ec && fs::is_directory(dir, ec)) static_dir_ = dir.string();
}

HttpResponse WebAssets::Serve(std::string_view method, std::string_view path,
                              std::string_view raw_target) const {
  if (method != "GET") return WebError(405, "method_not_allowed", "use GET");
  if (static_dir_.empty()) {
    return WebError(404, "not_found",
                    root_.empty() ? "the dashboard is disabled (no web_root configured)"
                                  : "no dashboard files in " + root_ + "/static (set web_root)");
  }
  std::string_view raw_path = raw_target.substr(0, raw_target.find('?'));
  if (raw_path.find('%') != std::string_view::npos || !IsSafeWebPath(path)) {
    return WebError(400, "bad_request",
                    "invalid dashboard path: use letters, digits, '.', '-', '_' and '/' only "
                    "(no '..', hidden files or escapes)");
  }
  std::string rel = path == "/" ? "index.html" : std::string(path.substr(1));
  fs::path file;
  std::error_code ec;
  if (rel.starts_with("vendor/")) {
    auto it = VendorFiles().find(std::string_view(rel).substr(7));
    if (it == VendorFiles().end()) return WebError(404, "not_found", "no vendor file " + rel);
    file = fs::canonical(fs::path(root_) / it->second, ec);
    if (ec) {
      return WebError(404, "not_found",
                      rel + " is missing: run `npm ci` in " + root_ + " (deploy/deps.sh does)");
    }
  } else {
    file = fs::canonical(fs::path(static_dir_) / rel, ec);
    // Symlinks must not lead out of the static directory.
    if (ec || !Inside(file, fs::path(static_dir_))) {
      return WebError(404, "not_found", "no such page: " + std::string(path));
    }
  }
  std::string_view type = ContentTypeFor(file.filename().string());
  if (type.empty() || !fs::is_regular_file(file, ec)) {
    return WebError(404, "not_found", "no such page: " + std::string(path));
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream body;
  body << in.rdbuf();
  if (!in) return WebError(500, "internal", "cannot read " + std::string(path));
  HttpResponse r;
  r.content_type = std::string(type);
  r.body = std::move(body).str();
  r.headers = DashboardSecurityHeaders();
  return r;
}

}  // namespace podsched::daemon
