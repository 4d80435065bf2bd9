#include "mend/base/fault_injection_file_system.h"

#include <array>

#include "mend/base/memory_file_system.h"

namespace mend {

namespace {

constexpr size_t kNumOps = static_cast<size_t>(FsOp::kLock) + 1;

std::string_view OpName(FsOp op) {
  static constexpr std::array<std::string_view, kNumOps> kNames = {
      "open",   "read", "write", "sync", "truncate", "close", "rename", "fsync directory",
      "unlink", "list", "mkdir", "stat", "lock"};
  return kNames[static_cast<size_t>(op)];
}

// The fault plan. It is shared with the files handed out, which may outlive the filesystem.
class FaultPlan {
 public:
  // Counts an attempt of `op` and returns the errno it must fail with, or 0 to let it through.
  // `tear` (if given) says whether a failing write leaves part of its data: with SetTornWrites,
  // every fault does except the operations after a crash point, which never reach the disk.
  int Attempt(FsOp op, bool* tear = nullptr) {
    std::lock_guard<std::mutex> guard(mu_);
    Rule& rule = rules_[Index(op)];
    ++rule.count;
    if (tear != nullptr) *tear = torn_writes_ && !crashed_;
    if (crashed_) return crash_err_;
    if (crash_countdown_ >= 0 && ChangesTheFileSystem(op)) {
      if (crash_countdown_-- == 0) {
        crashed_ = true;
        return crash_err_;
      }
    }
    if (rule.always != 0) return rule.always;
    if (rule.countdown < 0) return 0;
    if (rule.countdown > 0) {
      --rule.countdown;
      return 0;
    }
    rule.countdown = -1;  // A one-shot fault fires once.
    return rule.once;
  }

  void FailAfter(FsOp op, int n, int err) {
    std::lock_guard<std::mutex> guard(mu_);
    rules_[Index(op)].countdown = n;
    rules_[Index(op)].once = err;
  }

  void FailAlways(FsOp op, int err) {
    std::lock_guard<std::mutex> guard(mu_);
    rules_[Index(op)].always = err;
  }

  void CrashAfter(int n, int err) {
    std::lock_guard<std::mutex> guard(mu_);
    crash_countdown_ = n;
    crash_err_ = err;
    crashed_ = false;
  }

  bool crashed() const {
    std::lock_guard<std::mutex> guard(mu_);
    return crashed_;
  }

  void Clear() {
    std::lock_guard<std::mutex> guard(mu_);
    for (Rule& rule : rules_) rule = Rule{.count = rule.count};
    crash_countdown_ = -1;
    crashed_ = false;
  }

  void SetTornWrites(bool on) {
    std::lock_guard<std::mutex> guard(mu_);
    torn_writes_ = on;
  }

  int Count(FsOp op) const {
    std::lock_guard<std::mutex> guard(mu_);
    return rules_[Index(op)].count;
  }

 private:
  struct Rule {
    int count = 0;
    int countdown = -1;  // Successes left before the one-shot fault; -1 when none is armed.
    int once = 0;        // The errno of the one-shot fault.
    int always = 0;      // Non-zero: every attempt fails with this errno.
  };
  static size_t Index(FsOp op) { return static_cast<size_t>(op); }
  static bool ChangesTheFileSystem(FsOp op) {
    switch (op) {
      case FsOp::kWrite:
      case FsOp::kSync:
      case FsOp::kTruncate:
      case FsOp::kRename:
      case FsOp::kSyncDir:
      case FsOp::kUnlink:
      case FsOp::kCreateDirs:
        return true;
      default:
        return false;
    }
  }

  mutable std::mutex mu_;
  std::array<Rule, kNumOps> rules_{};
  bool torn_writes_ = false;
  int crash_countdown_ = -1;  // Changing operations left before the crash point; -1: none armed.
  int crash_err_ = 0;
  bool crashed_ = false;
};

Status Injected(int err, FsOp op, std::string_view path) {
  std::string context(OpName(op));
  context += ' ';
  context.append(path);
  context += " (injected fault)";
  return ErrnoToStatus(err, context);
}

// Counts an attempt of `op` and returns the injected error, if any.
Status Inject(FaultPlan& plan, FsOp op, std::string_view path) {
  const int err = plan.Attempt(op);
  return err == 0 ? OkStatus() : Injected(err, op, path);
}

// What every faulty file holds: the real file, the shared plan and the path for messages.
template <typename File>
class FaultFile : public File {
 public:
  FaultFile(std::unique_ptr<File> base, std::shared_ptr<FaultPlan> plan, std::string path)
      : base_(std::move(base)), plan_(std::move(plan)), path_(std::move(path)) {}

 protected:
  Status Check(FsOp op) { return Inject(*plan_, op, path_); }

  // A failed read returns nothing.
  Status ReadFault(std::string* out) {
    if (const int err = plan_->Attempt(FsOp::kRead); err != 0) {
      out->clear();
      return Injected(err, FsOp::kRead, path_);
    }
    return OkStatus();
  }

  // A disk may persist part of a write that reports failure: `write_half` writes the first half
  // when the plan tears this write.
  template <typename WriteHalf>
  Status WriteFault(WriteHalf write_half) {
    bool tear = false;
    if (const int err = plan_->Attempt(FsOp::kWrite, &tear); err != 0) {
      if (tear) write_half().IgnoreError();
      return Injected(err, FsOp::kWrite, path_);
    }
    return OkStatus();
  }

  std::unique_ptr<File> base_;

 private:
  std::shared_ptr<FaultPlan> plan_;
  std::string path_;
};

class FaultWritableFile final : public FaultFile<WritableFile> {
 public:
  using FaultFile::FaultFile;

  Status Append(std::string_view data) override {
    MEND_RETURN_IF_ERROR(
        WriteFault([&] { return base_->Append(data.substr(0, data.size() / 2)); }));
    return base_->Append(data);
  }

  Status Sync() override {
    MEND_RETURN_IF_ERROR(Check(FsOp::kSync));
    return base_->Sync();
  }

  Status Close() override {
    MEND_RETURN_IF_ERROR(Check(FsOp::kClose));
    return base_->Close();
  }
};

class FaultReadableFile final : public FaultFile<ReadableFile> {
 public:
  using FaultFile::FaultFile;

  Status Read(size_t n, std::string* out) override {
    MEND_RETURN_IF_ERROR(ReadFault(out));
    return base_->Read(n, out);
  }
};

class FaultRandomAccessFile final : public FaultFile<RandomAccessFile> {
 public:
  using FaultFile::FaultFile;

  Status ReadAt(uint64_t offset, size_t n, std::string* out) override {
    MEND_RETURN_IF_ERROR(ReadFault(out));
    return base_->ReadAt(offset, n, out);
  }

  Status WriteAt(uint64_t offset, std::string_view data) override {
    MEND_RETURN_IF_ERROR(
        WriteFault([&] { return base_->WriteAt(offset, data.substr(0, data.size() / 2)); }));
    return base_->WriteAt(offset, data);
  }

  Status Truncate(uint64_t size) override {
    MEND_RETURN_IF_ERROR(Check(FsOp::kTruncate));
    return base_->Truncate(size);
  }

  Result<uint64_t> Size() override {
    MEND_RETURN_IF_ERROR(Check(FsOp::kStat));
    return base_->Size();
  }

  Status Sync() override {
    MEND_RETURN_IF_ERROR(Check(FsOp::kSync));
    return base_->Sync();
  }

  Status Close() override {
    MEND_RETURN_IF_ERROR(Check(FsOp::kClose));
    return base_->Close();
  }
};

}  // namespace

class FaultInjectionFileSystem::Faults : public FaultPlan {};

FaultInjectionFileSystem::FaultInjectionFileSystem(FileSystem* base)
    : base_(base), faults_(std::make_shared<Faults>()) {}
FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

void FaultInjectionFileSystem::FailNext(FsOp op, int err) { faults_->FailAfter(op, 0, err); }
void FaultInjectionFileSystem::FailAfter(FsOp op, int n, int err) {
  faults_->FailAfter(op, n, err);
}
void FaultInjectionFileSystem::FailAlways(FsOp op, int err) { faults_->FailAlways(op, err); }
void FaultInjectionFileSystem::ClearFaults() { faults_->Clear(); }
void FaultInjectionFileSystem::SetTornWrites(bool on) { faults_->SetTornWrites(on); }
int FaultInjectionFileSystem::Count(FsOp op) const { return faults_->Count(op); }
void FaultInjectionFileSystem::CrashAfter(int n, int err) { faults_->CrashAfter(n, err); }
bool FaultInjectionFileSystem::Crashed() const { return faults_->crashed(); }

Status FaultInjectionFileSystem::DropUnsyncedData() {
  auto* memory = dynamic_cast<MemoryFileSystem*>(base_);
  if (memory == nullptr) return UnimplementedError("DropUnsyncedData needs a MemoryFileSystem");
  memory->DropUnsyncedData();
  return OkStatus();
}

Status FaultInjectionFileSystem::CutPower() {
  auto* memory = dynamic_cast<MemoryFileSystem*>(base_);
  if (memory == nullptr) return UnimplementedError("CutPower needs a MemoryFileSystem");
  memory->CutPower();
  return OkStatus();
}

Result<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::OpenWritable(
    const std::string& path, WriteMode mode) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kOpen, path));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, base_->OpenWritable(path, mode));
  return std::unique_ptr<WritableFile>(
      std::make_unique<FaultWritableFile>(std::move(file), faults_, path));
}

Result<std::unique_ptr<ReadableFile>> FaultInjectionFileSystem::OpenReadable(
    const std::string& path) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kOpen, path));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, base_->OpenReadable(path));
  return std::unique_ptr<ReadableFile>(
      std::make_unique<FaultReadableFile>(std::move(file), faults_, path));
}

Result<std::unique_ptr<RandomAccessFile>> FaultInjectionFileSystem::OpenRandomAccess(
    const std::string& path, bool create) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kOpen, path));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file,
                        base_->OpenRandomAccess(path, create));
  return std::unique_ptr<RandomAccessFile>(
      std::make_unique<FaultRandomAccessFile>(std::move(file), faults_, path));
}

Status FaultInjectionFileSystem::Rename(const std::string& from, const std::string& to) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kRename, from + " to " + to));
  return base_->Rename(from, to);
}

Status FaultInjectionFileSystem::SyncDir(const std::string& dir) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kSyncDir, dir));
  return base_->SyncDir(dir);
}

Status FaultInjectionFileSystem::Unlink(const std::string& path) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kUnlink, path));
  return base_->Unlink(path);
}

Result<std::vector<std::string>> FaultInjectionFileSystem::List(const std::string& dir) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kList, dir));
  return base_->List(dir);
}

Status FaultInjectionFileSystem::CreateDirs(const std::string& dir) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kCreateDirs, dir));
  return base_->CreateDirs(dir);
}

Result<FileInfo> FaultInjectionFileSystem::Stat(const std::string& path) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kStat, path));
  return base_->Stat(path);
}

Result<std::unique_ptr<FileLock>> FaultInjectionFileSystem::Lock(const std::string& path) {
  MEND_RETURN_IF_ERROR(Inject(*faults_, FsOp::kLock, path));
  return base_->Lock(path);
}

}  // namespace mend
