#include "agent/builtin_tool_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "mend/base/json.h"

namespace mend::agent {
namespace {

class FunctionTool final : public Tool {
 public:
  FunctionTool(ToolSpec spec, ToolFunction fn) : spec_(std::move(spec)), fn_(std::move(fn)) {}

  const ToolSpec& spec() const override { return spec_; }

  Result<ToolResult> Execute(std::string_view arguments_json, const ToolContext& ctx) override {
    Result<nlohmann::json> args = ParseJson(arguments_json);
    if (!args.ok()) return ErrorResult(args.status());
    if (!args->is_object()) return ToolResult::Error("arguments must be a JSON object");
    return fn_(*args, ctx);
  }

 private:
  ToolSpec spec_;
  ToolFunction fn_;
};

// Writes all of `data` to `fd`.
Status WriteAll(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoToStatus(errno, "write");
    done += static_cast<std::size_t>(n);
  }
  return OkStatus();
}

// A name for a temporary file next to `name` that no other writer picks at the same time.
std::string TempName(const std::string& name, int attempt) {
  static std::atomic<std::uint64_t> counter{0};
  return "." + name + ".mend-tmp-" + std::to_string(getpid()) + "-" +
         std::to_string(counter.fetch_add(1)) + "-" + std::to_string(attempt);
}

}  // namespace

std::unique_ptr<Tool> MakeFunctionTool(ToolSpec spec, ToolFunction fn) {
  return std::make_unique<FunctionTool>(std::move(spec), std::move(fn));
}

ToolResult ErrorResult(const Status& status) {
  return ToolResult::Error(std::string(status.message()));
}

Result<FileContent> ReadTargetFile(const WorkspaceTarget& target, std::size_t max_bytes,
                                   bool head_only) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; it is refused below.
  MEND_ASSIGN_OR_RETURN(UniqueFd fd, OpenTarget(target, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoToStatus(errno, "stat");
  if (S_ISDIR(st.st_mode)) return FailedPreconditionError("is a directory");
  if (!S_ISREG(st.st_mode)) return FailedPreconditionError("is not a regular file");
  FileContent file;
  file.size = static_cast<std::size_t>(st.st_size);
  if (file.size > max_bytes && !head_only) {
    return OutOfRangeError("file too large (" + std::to_string(st.st_size) + " bytes; limit " +
                           std::to_string(max_bytes) + ")");
  }
  char buf[64 * 1024];
  for (;;) {
    const std::size_t want = std::min(sizeof(buf), max_bytes + 1 - file.data.size());
    const ssize_t n = read(fd.get(), buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoToStatus(errno, "read");
    if (n == 0) break;
    file.data.append(buf, static_cast<std::size_t>(n));
    if (file.data.size() > max_bytes) {
      if (!head_only) return OutOfRangeError("file grew while being read");
      file.data.resize(max_bytes);
      file.size = std::max(file.size, max_bytes + 1);
      break;
    }
  }
  return file;
}

Status WriteTargetFile(const WorkspaceTarget& target, const std::string& content) {
  if (!target.dir.valid()) return NotFoundError("no such directory");
  const int dir = target.dir.get();
  if (target.name == ".") return FailedPreconditionError("is a directory");
  std::optional<mode_t> keep_mode;  // of a regular file being replaced
  struct stat st;
  if (fstatat(dir, target.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) return FailedPreconditionError("is a directory");
    if (S_ISREG(st.st_mode)) keep_mode = st.st_mode & 07777;
  }
  std::string temp;
  UniqueFd fd;
  for (int attempt = 0; !fd.valid(); ++attempt) {
    temp = TempName(target.name, attempt);
    fd = UniqueFd(openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         keep_mode ? 0600 : 0644));
    if (!fd.valid() && (errno != EEXIST || attempt >= 10)) {
      return ErrnoToStatus(errno, "create temporary file");
    }
  }
  Status s = WriteAll(fd.get(), content);
  // A file that existed keeps its mode (the umask played no part in it).
  if (s.ok() && keep_mode && fchmod(fd.get(), *keep_mode) != 0) s = ErrnoToStatus(errno, "chmod");
  if (s.ok() && fsync(fd.get()) != 0) s = ErrnoToStatus(errno, "fsync");
  if (s.ok() && renameat(dir, temp.c_str(), dir, target.name.c_str()) != 0) {
    s = ErrnoToStatus(errno, "rename into place");
  }
  if (!s.ok()) {
    unlinkat(dir, temp.c_str(), 0);
    return s;
  }
  if (fsync(dir) != 0) return ErrnoToStatus(errno, "fsync directory");
  return OkStatus();
}

}  // namespace mend::agent
