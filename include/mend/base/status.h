#pragma once

// Status, mend's error value: a canonical code (the numbers of Abseil and gRPC), a message and
// optional details (Retry-After, a detail code, a class), and the error classes retries and
// recovery decide on (ClassOf, IsRetryable; docs/llm_providers.md). Callers decide on the code and
// the class, never on the message. Copies are cheap; thread-compatible.

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mend {

/// The canonical error space (the same codes and numbers as Abseil and gRPC). Callers decide on the
/// code, never on message text:
///   kUnavailable, kResourceExhausted, kDeadlineExceeded  transient; retry with backoff
///   kInvalidArgument, kFailedPrecondition, kOutOfRange    permanent; never retry
///   kUnauthenticated, kPermissionDenied                   auth; never retry, never an outage
///   kAborted                                              lost lease or stale fencing epoch
///   kDataLoss                                             a corrupt record or row
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

/// "OK", "INVALID_ARGUMENT", ... as Abseil spells them.
std::string_view StatusCodeName(StatusCode code);

/// The class of an error as recovery and the `--json` shapes see it (docs/llm_providers.md).
enum class ErrorClass { kTransient, kPermanent, kAuth, kInternal };
std::string_view ErrorClassName(ErrorClass c);  ///< "transient", "permanent", "auth", "internal"

/// Status is an error code, a message and optional details; the default value is OK. Copying is
/// cheap (the details of an error are shared and immutable). Thread-compatible.
class [[nodiscard]] Status {
 public:
  Status() = default;
  /// An error with `code` and `message`; kOk makes an OK status.
  Status(StatusCode code, std::string_view message);

  /// Whether this is OK.
  bool ok() const { return rep_ == nullptr; }
  /// kOk for OK.
  StatusCode code() const;
  /// "" for OK.
  std::string_view message() const;

  /// How long the peer asked us to wait before retrying (HTTP Retry-After), if it said.
  std::optional<std::chrono::milliseconds> retry_after() const;
  /// A copy with retry_after() set.
  Status WithRetryAfter(std::chrono::milliseconds delay) const;

  /// A stable machine-readable error code beyond the canonical one, e.g. "MEND_RUN_NO_PROGRESS" or
  /// "http_429". Empty when not set.
  std::string_view detail_code() const;
  /// A copy with detail_code() set.
  Status WithDetailCode(std::string_view detail) const;

  /// An explicit override of the default classification of the code (see ClassOf). Providers use it
  /// where the canonical code alone is ambiguous.
  Status WithClass(ErrorClass c) const;
  /// The class set with WithClass, if any.
  std::optional<ErrorClass> class_override() const;

  /// A copy whose message is `prefix + ": " + message()`; OK stays OK.
  Status Annotate(std::string_view prefix) const;

  /// "OK" or "NOT_FOUND: message".
  std::string ToString() const;

  /// Explicitly ignores an error where that is the intended behaviour.
  void IgnoreError() const {}

  /// Same code, message and details.
  friend bool operator==(const Status& a, const Status& b);

 private:
  struct Rep {
    StatusCode code;
    std::string message;
    std::optional<std::chrono::milliseconds> retry_after;
    std::string detail_code;
    std::optional<ErrorClass> class_override;
  };
  explicit Status(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}

  std::shared_ptr<const Rep> rep_;
};

/// Writes ToString().
std::ostream& operator<<(std::ostream& os, const Status& s);

/// The OK status.
inline Status OkStatus() { return Status(); }

/// The class of an error: its override if it has one, otherwise derived from the code.
/// OK has no class; asking is a programmer error and yields kInternal.
ErrorClass ClassOf(const Status& s);
/// True when retrying the same operation later may succeed (the class is kTransient).
bool IsRetryable(const Status& s);

///@{
/// An error of the code each is named after, with `message`. ResourceExhaustedError may carry the
/// Retry-After delay.
Status CancelledError(std::string_view message);
Status UnknownError(std::string_view message);
Status InvalidArgumentError(std::string_view message);
Status DeadlineExceededError(std::string_view message);
Status NotFoundError(std::string_view message);
Status AlreadyExistsError(std::string_view message);
Status PermissionDeniedError(std::string_view message);
Status ResourceExhaustedError(std::string_view message);
Status ResourceExhaustedError(std::string_view message, std::chrono::milliseconds retry_after);
Status FailedPreconditionError(std::string_view message);
Status AbortedError(std::string_view message);
Status OutOfRangeError(std::string_view message);
Status UnimplementedError(std::string_view message);
Status InternalError(std::string_view message);
Status UnavailableError(std::string_view message);
Status DataLossError(std::string_view message);
Status UnauthenticatedError(std::string_view message);
///@}

/// Maps an errno value from a system call to a Status with `context` (e.g. "open /x/y") and the
/// system's description: ENOENT → kNotFound, EEXIST → kAlreadyExists, EACCES/EPERM →
/// kPermissionDenied, ENOSPC/EDQUOT/EMFILE/ENFILE → kResourceExhausted, EAGAIN/EWOULDBLOCK/EINTR →
/// kUnavailable, EINVAL/ENAMETOOLONG/ENOTDIR/EISDIR → kFailedPrecondition, everything else
/// (EIO, EROFS, ...) → kInternal.
Status ErrnoToStatus(int err, std::string_view context);

}  // namespace mend
