// The two line sources of `mend chat`. The libedit glue stays thin: the decisions about what
// completes what are in chat_completion.cc, which is tested without a terminal.
#include "cli/chat_line_reader.h"

#include <editline/readline.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/chat_completion.h"

namespace mend::cli {
namespace {

constexpr char kPrompt[] = "> ";

class StreamReader final : public ChatLineReader {
 public:
  StreamReader(CliContext& ctx, bool show_prompt) : ctx_(ctx), show_prompt_(show_prompt) {}
  bool ReadLine(std::string& line) override {
    if (show_prompt_) ctx_.out << kPrompt << std::flush;
    return static_cast<bool>(std::getline(*ctx_.input.in, line));
  }

 private:
  CliContext& ctx_;
  const bool show_prompt_;
};

// libedit calls plain C functions, so the live reader's DLQ source is reached through this.
std::function<std::vector<lessonq::Job>()>* active_dead_letters = nullptr;

// Words are separated by spaces only, so "/reflect" is one word with its slash.
char kWordBreaks[] = " ";

std::string CommonPrefix(const std::vector<Completion>& candidates) {
  std::string prefix = candidates.front().text;
  for (const Completion& c : candidates) {
    size_t n = 0;
    while (n < prefix.size() && n < c.text.size() && prefix[n] == c.text[n]) ++n;
    prefix.resize(n);
  }
  return prefix;
}

// readline's convention: [substitution, alternatives..., NULL], allocated with malloc.
char** MatchArray(const std::string& substitution, const std::vector<Completion>& alternatives) {
  char** matches = static_cast<char**>(std::calloc(alternatives.size() + 2, sizeof(char*)));
  if (matches == nullptr) return nullptr;
  matches[0] = strdup(substitution.c_str());
  for (size_t i = 0; i < alternatives.size(); ++i) {
    matches[i + 1] = strdup(alternatives[i].text.c_str());
  }
  return matches;
}

char** CompleteAtCursor(const char* /*text*/, int /*start*/, int end) {
  rl_attempted_completion_over = 1;  // never fall back to file names
  rl_completion_append_character = ' ';
  const std::string line(rl_line_buffer, static_cast<size_t>(end));
  std::vector<lessonq::Job> dead_letters;
  if (active_dead_letters != nullptr && line.starts_with("/reflect ")) {
    dead_letters = (*active_dead_letters)();
  }
  const std::vector<Completion> candidates = CompleteChatLine(line, dead_letters);
  if (candidates.empty()) return nullptr;
  bool previews = false;
  for (const Completion& c : candidates) previews = previews || c.display != c.text;
  if (!previews) {
    if (candidates.size() == 1) return MatchArray(candidates.front().text, {});
    return MatchArray(CommonPrefix(candidates), candidates);
  }
  // libedit lists bare matches, so candidates with a preview are listed here, and only a single
  // candidate or the common prefix of several is inserted.
  std::fputc('\n', rl_outstream);
  for (const Completion& c : candidates) std::fprintf(rl_outstream, "%s\n", c.display.c_str());
  rl_forced_update_display();
  if (candidates.size() == 1) return MatchArray(candidates.front().text, {});
  rl_completion_append_character = '\0';
  return MatchArray(CommonPrefix(candidates), {});
}

class EditReader final : public ChatLineReader {
 public:
  explicit EditReader(std::function<std::vector<lessonq::Job>()> dead_letters)
      : dead_letters_(std::move(dead_letters)) {
    active_dead_letters = &dead_letters_;
    rl_readline_name = "mend";
    rl_completer_word_break_characters = kWordBreaks;
    rl_attempted_completion_function = CompleteAtCursor;
    using_history();
  }
  ~EditReader() override {
    active_dead_letters = nullptr;
    rl_attempted_completion_function = nullptr;
  }

  bool ReadLine(std::string& line) override {
    char* input = readline(kPrompt);
    if (input == nullptr) return false;
    line = input;
    std::free(input);
    if (line.find_first_not_of(" \t") != std::string::npos) add_history(line.c_str());
    return true;
  }

 private:
  std::function<std::vector<lessonq::Job>()> dead_letters_;
};

}  // namespace

std::unique_ptr<ChatLineReader> StreamLineReader(CliContext& ctx, bool show_prompt) {
  return std::make_unique<StreamReader>(ctx, show_prompt);
}

std::unique_ptr<ChatLineReader> EditLineReader(
    std::function<std::vector<lessonq::Job>()> dead_letters) {
  return std::make_unique<EditReader>(std::move(dead_letters));
}

}  // namespace mend::cli
