#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/lessonq/job.h"

// Where `mend chat` reads its lines: a plain stream (pipes, files, tests) or, at a terminal,
// libedit with history and Tab completion (chat_completion.h).
namespace mend::cli {

class ChatLineReader {
 public:
  virtual ~ChatLineReader() = default;
  // The next line without its newline; false at the end of the input.
  virtual bool ReadLine(std::string& line) = 0;
};

// std::getline on ctx.input.in (which must not be null), writing the prompt "> " to ctx.out first
// when `show_prompt` is set. The context must outlive the reader.
std::unique_ptr<ChatLineReader> StreamLineReader(CliContext& ctx, bool show_prompt);

// libedit on the process's standard input and output, prompt "> ", in-memory history. Tab
// completes through CompleteChatLine; `dead_letters` is called at each Tab that completes a job
// id, so the ids are always the live ones (an error there just offers no ids). libedit's state is
// global: at most one such reader may exist at a time, on the thread that created it.
std::unique_ptr<ChatLineReader> EditLineReader(
    std::function<std::vector<lessonq::Job>()> dead_letters);

}  // namespace mend::cli
