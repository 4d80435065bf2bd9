#pragma once

// The web UI's static files, compiled into the binary from src/server/ui/ by embed_ui.cmake
// (docs/serve.md).
#include <span>
#include <string_view>

namespace mend::server {

struct UiFile {
  std::string_view path;          // relative to src/server/ui/, e.g. "pages/runs.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view etag;          // quoted, from the content's SHA-256
  std::string_view bytes;
};

// Every embedded file, sorted by path. The data is static: valid for the life of the process.
// Thread-safe.
std::span<const UiFile> UiFiles();

}  // namespace mend::server
