#include "agent/builtin_tool_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
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

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::unique_ptr<Tool> MakeFunctionTool(ToolSpec spec, ToolFunction fn) {
  return std::make_unique<FunctionTool>(std::move(spec), std::move(fn));
}

ToolResult ErrorResult(const Status& status) {
  return ToolResult::Error(std::string(status.message()));
}

Result<std::string> ReadWholeFile(const std::string& path, std::size_t max_bytes) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoToStatus(errno, "open");
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoToStatus(errno, "stat");
  if (S_ISDIR(st.st_mode)) return FailedPreconditionError("is a directory");
  if (!S_ISREG(st.st_mode)) return FailedPreconditionError("is not a regular file");
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    return OutOfRangeError("file too large (" + std::to_string(st.st_size) + " bytes; limit " +
                           std::to_string(max_bytes) + ")");
  }
  std::string content;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoToStatus(errno, "read");
    if (n == 0) break;
    content.append(buf, static_cast<std::size_t>(n));
    if (content.size() > max_bytes) return OutOfRangeError("file grew while being read");
  }
  return content;
}

Status WriteWholeFile(const std::string& path, const std::string& content) {
  Fd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoToStatus(errno, "open for writing");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoToStatus(errno, "write");
    done += static_cast<std::size_t>(n);
  }
  return OkStatus();
}

}  // namespace mend::agent
