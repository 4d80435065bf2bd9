#pragma once

// A lesson job (docs/wal_format.md): LessonRequest, what a trigger asks to reflect on; Job, its
// pending form; and JobIdFor, the content address that dedupes requests. Plain values and pure
// functions.

#include <cstdint>
#include <string>
#include <string_view>

#include "mend/base/clock.h"

namespace mend::lessonq {

/// What a lesson job asks for: reflect on `task`, which the agent tried as `attempt` and which
/// ended as `outcome`, because of `trigger` ("error", "hallucination", "low_quality", "manual").
/// The field names match chatcli's WAL payload (docs/wal_format.md).
struct LessonRequest {
  std::string task;     ///< what the agent was asked
  std::string attempt;  ///< what it did
  std::string outcome;  ///< how it ended
  std::string trigger;  ///< why we reflect
  /// mend's own additions (not part of the job id; chatcli ignores them): the run that asked for
  /// the lesson and the W3C traceparent of the span that enqueued it, so the job's processing
  /// joins the run's trace (docs/observe.md). Empty when not known.
  std::string run_id;
  std::string traceparent;  ///< see run_id
  /// mend's own too: the provider the lesson is generated with, that of the run it came from (its
  /// kind, base URL and model; the model is reflexion.model when that is set), never an API key.
  /// A job is generated only on that provider kind and base URL (JobFitsEndpoint). All empty
  /// when not recorded (a record chatcli or an older mend wrote, `mend reflect enqueue`).
  std::string provider;  ///< "openai", "anthropic", "scripted"
  std::string base_url;  ///< "" = the provider's public default
  std::string model;     ///< "" = the model the generating provider is configured with
  /// mend's own: the workspace the lesson fact is stored in ("" = the sink's own, for runs the
  /// global scope). The proxy sets it so one client's lessons stay in that client's scope.
  std::string workspace;

  /// Field by field.
  bool operator==(const LessonRequest&) const = default;
};

/// Where lessons can be generated: a provider kind and its base URL, the endpoint an API key
/// belongs to. Empty: any endpoint (no restriction).
struct LessonEndpoint {
  std::string provider;  ///< the provider kind
  std::string base_url;  ///< its base URL

  /// No restriction.
  bool empty() const { return provider.empty() && base_url.empty(); }
  /// Field by field.
  bool operator==(const LessonEndpoint&) const = default;
};

/// The endpoint `request` recorded (empty when it recorded no provider).
LessonEndpoint EndpointOf(const LessonRequest& request);
/// True when `request` may be generated on `endpoint`: the request recorded no provider, the
/// endpoint is empty, or both name the same provider kind and base URL (compared without trailing
/// slashes). Pure.
bool JobFitsEndpoint(const LessonRequest& request, const LessonEndpoint& endpoint);
/// A base URL as JobFitsEndpoint compares it: without trailing slashes.
std::string_view CanonicalBaseUrl(std::string_view base_url);

/// One pending lesson job as it lives in a WAL record (docs/wal_format.md).
struct Job {
  std::string id;          ///< JobIdFor(request)
  LessonRequest request;   ///< what to reflect on
  Time enqueued_at{};      ///< when it was first enqueued
  Time next_attempt_at{};  ///< when it may be processed (again)
  int64_t attempts = 0;    ///< processing attempts made so far
  std::string last_error;  ///< the error of the last failed attempt, "" if none

  /// Field by field.
  bool operator==(const Job&) const = default;
};

/// The content address of a request (docs/wal_format.md): lowercase hex of the first 8 bytes of
/// SHA-256 of "task:" + norm(task) + "\0trigger:" + lower(trim(trigger)) + "\0attempt:" +
/// trim(attempt) + "\0outcome:" + trim(outcome), where norm lower-cases, trims and collapses runs
/// of white space into one space. Re-triggering the same situation yields the same id, so an
/// enqueue of a job that is still pending is a no-op. Pure and thread-safe.
///
///   JobIdFor({"Edit main.go", "used full rewrite", "ERROR: file too large", "error"})
///       == "bba86ebf380b9dbc"
std::string JobIdFor(const LessonRequest& request);

/// norm() above: Unicode lower-casing as Go's strings.ToLower does it (ToLowerUtf8: the simple
/// mapping of every script; invalid bytes become U+FFFD), trimming and collapsing of white space.
std::string NormalizeTask(std::string_view task);

/// True for a string JobIdFor can produce: exactly 16 lowercase hexadecimal characters. Names of
/// WAL files are checked with it before they are used as paths.
bool IsJobId(std::string_view id);

}  // namespace mend::lessonq
