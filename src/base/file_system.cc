#include "mend/base/file_system.h"

#include <utility>
#include <vector>

namespace mend {

namespace {

// Big enough to make few calls for large records, small enough not to over-allocate for small
// files.
constexpr size_t kReadChunk = 64 * 1024;

std::string_view StripTrailingSlashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

}  // namespace

Result<std::unique_ptr<RandomAccessFile>> FileSystem::OpenRandomAccess(const std::string& path,
                                                                       bool /*create*/) {
  return UnimplementedError("random access files are not supported here: " + path);
}

Status ReadableFile::ReadExactly(size_t n, std::string* out) {
  out->clear();
  std::string chunk;
  while (out->size() < n) {
    MEND_RETURN_IF_ERROR(Read(n - out->size(), &chunk));
    if (chunk.empty()) {
      return DataLossError("unexpected end of file: wanted " + std::to_string(n) + " bytes, got " +
                           std::to_string(out->size()));
    }
    out->append(chunk);
  }
  return OkStatus();
}

Result<std::string> ReadFileToString(FileSystem& fs, const std::string& path) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, fs.OpenReadable(path));
  std::string contents;
  std::string chunk;
  while (true) {
    MEND_RETURN_IF_ERROR(file->Read(kReadChunk, &chunk));
    if (chunk.empty()) break;
    contents.append(chunk);
  }
  return contents;
}

namespace {

Status WriteAndSync(FileSystem& fs, const std::string& path, std::string_view data) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                        fs.OpenWritable(path, WriteMode::kTruncate));
  MEND_RETURN_IF_ERROR(file->Append(data));
  MEND_RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

}  // namespace

Status WriteFileAtomically(FileSystem& fs, const std::string& path, std::string_view data) {
  // The temporary lives in the same directory so that the rename never crosses filesystems.
  const std::string tmp = path + ".tmp";
  Status s = WriteAndSync(fs, tmp, data);
  if (s.ok()) s = fs.Rename(tmp, path);
  if (!s.ok()) {
    // Best effort: a leftover temporary is harmless (it is overwritten next time).
    fs.Unlink(tmp).IgnoreError();
    return s;
  }
  return fs.SyncDir(DirName(path));
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string joined(a);
  if (joined.back() != '/') joined += '/';
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  joined.append(b);
  return joined;
}

std::string DirName(std::string_view path) {
  path = StripTrailingSlashes(path);
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(StripTrailingSlashes(path.substr(0, slash)));
}

std::string BaseName(std::string_view path) {
  path = StripTrailingSlashes(path);
  if (path == "/") return "/";
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return std::string(path);
  return std::string(path.substr(slash + 1));
}

std::string NormalizePath(std::string_view path) {
  if (path.empty()) return "";
  const bool absolute = path.front() == '/';
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
        continue;
      }
      if (absolute) continue;  // "/.." is "/"
    }
    parts.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out.append(parts[i]);
  }
  return out.empty() ? "." : out;
}

}  // namespace mend
