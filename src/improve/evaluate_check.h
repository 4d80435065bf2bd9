#pragma once

// The check command of candidate evaluation (docs/improve.md "Check command"). Not a public API.

#include <chrono>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/subprocess.h"
#include "mend/improve/cases.h"
#include "mend/improve/evaluate.h"

namespace mend::improve::internal {

// The most the check may print on stdout; a verdict is a few bytes, so more is an error rather
// than something to parse.
inline constexpr size_t kMaxCheckStdoutBytes = 64 * 1024;
// How much of the first line of a failing check's stderr its error quotes.
inline constexpr size_t kMaxCheckStderrExcerptBytes = 200;
// How much of what a check printed its verdict keeps as CheckVerdict::message.
inline constexpr size_t kMaxCheckMessageBytes = 2048;
inline constexpr size_t kMaxCheckMessageLines = 20;

// The first kMaxCheckMessageLines lines of `text` with white space at both ends removed, invalid
// UTF-8 repaired and cut to kMaxCheckMessageBytes (whole characters), "..." appended when anything
// was left out. "" for text that is only white space. Any bytes are accepted.
std::string CheckMessageExcerpt(std::string_view text);

// The JSON object the check reads on stdin: {task, status, output, error, transcript, case: {id,
// task, tags, check_args}, repeat}. `transcript` is the run's transcript as a JSON array.
std::string CheckInput(const Case& c, const CaseRun& run, const nlohmann::json& transcript);

// The verdict in a check's stdout: exactly one JSON object (white space around it allowed) with a
// boolean "pass", an optional finite number "score" (default 1 when passing, 0 otherwise) and an
// optional string "reason" (CheckVerdict::message, through CheckMessageExcerpt); other members are
// ignored, a "reason" of another type too. Anything else is a failed verdict whose `error` says
// what was wrong.
CheckVerdict ParseVerdict(std::string_view stdout_text);

// The verdict of a finished check process: a timeout, a signal, a non-zero exit (quoting the
// first line of stderr) or too much output make it failed with `error` set; otherwise
// ParseVerdict of its stdout. A verdict without a reason gets the excerpt of stderr as its
// message, or, when it failed with `error` set, of stdout when stderr is empty.
CheckVerdict VerdictOf(const SubprocessResult& result, std::chrono::milliseconds timeout);

// "200ms", "30s", "2m" (the largest unit that divides `d` exactly).
std::string FormatTimeout(std::chrono::milliseconds d);

// Runs the check: `argv` in `cwd` with `stdin_data`, killed after `timeout`. A check that cannot
// start is a failed verdict ("could not start: ...").
CheckVerdict RunCheck(const std::vector<std::string>& argv, const std::string& cwd,
                      const std::string& stdin_data, std::chrono::milliseconds timeout);

}  // namespace mend::improve::internal
