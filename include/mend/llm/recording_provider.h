#pragma once

// RecordingProvider, a wrapper that records every response of a provider into a cassette
// ScriptedProvider replays (`mend run --record`; docs/scripted_provider_format.md, "Recording a
// cassette"). Thread-safe.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/llm/provider.h"
#include "mend/llm/scripted_provider.h"

namespace mend::llm {

/// Wraps a provider and records every response it gives into a cassette: a script in the scripted
/// provider's format (docs/scripted_provider_format.md, "Recording a cassette"), so that replaying
/// it with ScriptedProvider::FromFile answers the same conversation with the same completions and
/// errors. Each completion becomes an answer step (text, tool calls with their ids, names and
/// verbatim arguments, reported token counts); each error becomes an error step (code, message,
/// retry_after, detail_code, class). Requests, model names, response ids, finish reasons other
/// than stop/tool_calls, costs, API keys and headers are not recorded, with one exception: when a
/// request continues a conversation past the answers recorded so far (a resumed run), its history's
/// assistant messages are first recorded as answers (text and tool calls, no token counts), so that
/// replaying the same requests answers each from the answer recorded for it (a new process that
/// continues the conversation at a turn skips the errors recorded before that turn's answer).
///
/// After every response the whole cassette is written to `path` through WriteFileAtomically
/// (temporary in the same directory, fsync, rename, fsync of the directory): readers see the
/// previous or the new cassette, never a mix. The first response replaces a file already at
/// `path`. Files are created with the filesystem's mode for new files (0600 on PosixFileSystem).
///
/// A failed write never fails the call: Complete() returns the wrapped provider's result, the next
/// response tries again with the whole cassette, and last_write_status() reports the failure.
///
/// Thread-safe: concurrent Complete() calls run the wrapped provider concurrently; their steps are
/// appended and written in the order the responses arrive.
class RecordingProvider final : public LlmProvider {
 public:
  /// Borrows `inner` and `fs`; both must outlive this object.
  RecordingProvider(LlmProvider& inner, FileSystem& fs, std::string path);
  /// Owns `inner` (not null); borrows `fs`.
  RecordingProvider(std::unique_ptr<LlmProvider> inner, FileSystem& fs, std::string path);

  /// The wrapped provider's result, unchanged.
  Result<Completion> Complete(const CompletionRequest& request) override;
  /// The wrapped provider's name: recording is invisible to callers.
  std::string_view name() const override;

  /// OK when nothing was written yet or the latest write succeeded; otherwise the error of the
  /// latest write, annotated with "recording <path>". A later successful write clears it.
  Status last_write_status() const;
  /// How many steps the cassette holds (written or not).
  size_t steps_recorded() const;
  /// Where the cassette is written.
  const std::string& path() const { return path_; }

 private:
  // Appends the answers of `request`'s history that the cassette lacks (requires mu_).
  void AlignWithTurn(const CompletionRequest& request);

  std::unique_ptr<LlmProvider> owned_;
  LlmProvider& inner_;
  FileSystem& fs_;
  const std::string path_;

  mutable std::mutex mu_;
  std::vector<ScriptedStep> steps_;
  size_t answers_ = 0;  // answer steps in steps_
  Status last_write_;
};

}  // namespace mend::llm
