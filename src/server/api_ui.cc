// Routes of the web UI: the static files embedded in the binary (ui_files.h, docs/serve.md).
#include <httplib.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "server/api.h"
#include "server/serve_context.h"
#include "server/ui_files.h"

namespace mend::server {
namespace {

// Scripts and styles come only from this server's own files (no inline script, no eval, nothing
// from another origin), the UI talks only to this server, and no other site may frame it.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

void SetSecurityHeaders(httplib::Response& res) {
  res.set_header("Content-Security-Policy", std::string(kContentSecurityPolicy));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
}

// A name an embedded file can have: segments of [A-Za-z0-9_.-], none empty or starting with a
// dot. The lookup below is exact, so this only keeps odd requests ("..", "//", "%00") from being
// compared at all.
bool IsUiPath(std::string_view path) {
  if (path.empty() || path.size() > 200) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment.empty() || segment.front() == '.') return false;
    for (char c : segment) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

const UiFile* FindUiFile(std::string_view path) {
  if (!IsUiPath(path)) return nullptr;
  std::span<const UiFile> files = UiFiles();
  auto it = std::find_if(files.begin(), files.end(),
                         [path](const UiFile& file) { return file.path == path; });
  return it == files.end() ? nullptr : &*it;
}

// The files change only with the binary: a browser revalidates each time (no-cache) and gets a
// 304 without a body while the entity tag still matches.
void ServeUiFile(const httplib::Request& req, httplib::Response& res, std::string_view path) {
  SetSecurityHeaders(res);
  const UiFile* file = FindUiFile(path);
  if (file == nullptr) {
    WriteError(res, NotFoundError("no such file in the web UI: " + req.path));
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_header("ETag", std::string(file->etag));
  if (req.get_header_value("If-None-Match") == file->etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(std::string(file->bytes), std::string(file->content_type));
}

}  // namespace

void AddUiRoutes(ApiRoutes& routes, ServeContext& context) {
  (void)context;
  httplib::Server& http = routes.http();
  http.Get("/", [](const httplib::Request& req, httplib::Response& res) {
    ServeUiFile(req, res, "index.html");
  });
  http.Get("/ui/(.*)", [](const httplib::Request& req, httplib::Response& res) {
    ServeUiFile(req, res, req.matches[1].str());
  });
}

}  // namespace mend::server
