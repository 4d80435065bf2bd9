#include "mend/obs/events.h"

namespace mend::obs {

Result<std::unique_ptr<JsonlFileSink>> JsonlFileSink::Open(FileSystem& fs, const std::string& path,
                                                           JsonlSync sync) {
  const std::string dir = DirName(path);
  if (!dir.empty() && dir != ".") MEND_RETURN_IF_ERROR(fs.CreateDirs(dir));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                        fs.OpenWritable(path, WriteMode::kAppend));
  return std::make_unique<JsonlFileSink>(std::move(file), sync);
}

JsonlFileSink::JsonlFileSink(std::unique_ptr<WritableFile> file, JsonlSync sync)
    : file_(std::move(file)), sync_(sync) {}

Status JsonlFileSink::Write(const Event& event) {
  std::string line;
  // After a failed append the file may end in a fragment; a leading newline closes it off so this
  // record parses on its own line.
  std::lock_guard lock(mu_);
  if (torn_) line += '\n';
  line += EventToJson(event);
  line += '\n';
  Status s = file_->Append(line);
  torn_ = !s.ok();
  if (s.ok() && sync_ == JsonlSync::kEveryEvent) s = file_->Sync();
  return s;
}

Status JsonlFileSink::Flush() {
  std::lock_guard lock(mu_);
  return file_->Sync();
}

Status MemorySink::Write(const Event& event) {
  std::lock_guard lock(mu_);
  events_.push_back(event);
  return OkStatus();
}

std::vector<Event> MemorySink::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

size_t MemorySink::size() const {
  std::lock_guard lock(mu_);
  return events_.size();
}

void MemorySink::Clear() {
  std::lock_guard lock(mu_);
  events_.clear();
}

}  // namespace mend::obs
