#pragma once

#include <cstdint>
#include <string>

#include "mend/base/clock.h"

namespace mend::lessonq {

// What a lesson job asks for: reflect on `task`, which the agent tried as `attempt` and which
// ended as `outcome`, because of `trigger` ("error", "hallucination", "low_quality", "manual").
// The field names match chatcli's WAL payload (DESIGN.md §8).
struct LessonRequest {
  std::string task;
  std::string attempt;
  std::string outcome;
  std::string trigger;
  // mend's own additions (not part of the job id; chatcli ignores them): the run that asked for
  // the lesson and the W3C traceparent of the span that enqueued it, so the job's processing
  // joins the run's trace (docs/observe.md). Empty when not known.
  std::string run_id;
  std::string traceparent;

  bool operator==(const LessonRequest&) const = default;
};

// One pending lesson job as it lives in a WAL record (docs/wal_format.md).
struct Job {
  std::string id;  // JobIdFor(request)
  LessonRequest request;
  Time enqueued_at{};
  Time next_attempt_at{};
  int64_t attempts = 0;    // processing attempts made so far
  std::string last_error;  // the error of the last failed attempt, "" if none

  bool operator==(const Job&) const = default;
};

// The content address of a request (DESIGN.md §8): lowercase hex of the first 8 bytes of
// SHA-256 of "task:" + norm(task) + "\0trigger:" + lower(trim(trigger)) + "\0attempt:" +
// trim(attempt) + "\0outcome:" + trim(outcome), where norm lower-cases, trims and collapses runs
// of white space into one space. Re-triggering the same situation yields the same id, so an
// enqueue of a job that is still pending is a no-op. Pure and thread-safe.
//
//   JobIdFor({"Edit main.go", "used full rewrite", "ERROR: file too large", "error"})
//       == "bba86ebf380b9dbc"
std::string JobIdFor(const LessonRequest& request);

// norm() above: Unicode lower-casing as Go's strings.ToLower does it (ToLowerUtf8: the simple
// mapping of every script; invalid bytes become U+FFFD), trimming and collapsing of white space.
std::string NormalizeTask(std::string_view task);

// True for a string JobIdFor can produce: exactly 16 lowercase hexadecimal characters. Names of
// WAL files are checked with it before they are used as paths.
bool IsJobId(std::string_view id);

}  // namespace mend::lessonq
