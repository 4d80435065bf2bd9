#include "mend/base/status.h"

#include <cerrno>
#include <cstring>
#include <ostream>

namespace mend {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kUnknown:
      return "UNKNOWN";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kAborted:
      return "ABORTED";
    case StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kDataLoss:
      return "DATA_LOSS";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

std::string_view ErrorClassName(ErrorClass c) {
  switch (c) {
    case ErrorClass::kTransient:
      return "transient";
    case ErrorClass::kPermanent:
      return "permanent";
    case ErrorClass::kAuth:
      return "auth";
    case ErrorClass::kInternal:
      return "internal";
  }
  return "internal";
}

Status::Status(StatusCode code, std::string_view message) {
  if (code != StatusCode::kOk) {
    rep_ = std::make_shared<const Rep>(Rep{code, std::string(message), std::nullopt, {}, {}});
  }
}

StatusCode Status::code() const { return rep_ ? rep_->code : StatusCode::kOk; }

std::string_view Status::message() const {
  return rep_ ? std::string_view(rep_->message) : std::string_view();
}

std::optional<std::chrono::milliseconds> Status::retry_after() const {
  return rep_ ? rep_->retry_after : std::nullopt;
}

Status Status::WithRetryAfter(std::chrono::milliseconds delay) const {
  if (!rep_) return *this;
  auto rep = std::make_shared<Rep>(*rep_);
  rep->retry_after = delay;
  return Status(std::shared_ptr<const Rep>(std::move(rep)));
}

std::string_view Status::detail_code() const {
  return rep_ ? std::string_view(rep_->detail_code) : std::string_view();
}

Status Status::WithDetailCode(std::string_view detail) const {
  if (!rep_) return *this;
  auto rep = std::make_shared<Rep>(*rep_);
  rep->detail_code = std::string(detail);
  return Status(std::shared_ptr<const Rep>(std::move(rep)));
}

Status Status::WithClass(ErrorClass c) const {
  if (!rep_) return *this;
  auto rep = std::make_shared<Rep>(*rep_);
  rep->class_override = c;
  return Status(std::shared_ptr<const Rep>(std::move(rep)));
}

std::optional<ErrorClass> Status::class_override() const {
  return rep_ ? rep_->class_override : std::nullopt;
}

Status Status::Annotate(std::string_view prefix) const {
  if (!rep_) return *this;
  auto rep = std::make_shared<Rep>(*rep_);
  rep->message = std::string(prefix) + ": " + rep_->message;
  return Status(std::shared_ptr<const Rep>(std::move(rep)));
}

std::string Status::ToString() const {
  if (!rep_) return "OK";
  std::string out(StatusCodeName(rep_->code));
  out += ": ";
  out += rep_->message;
  return out;
}

bool operator==(const Status& a, const Status& b) {
  return a.code() == b.code() && a.message() == b.message();
}

std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

ErrorClass ClassOf(const Status& s) {
  if (auto c = s.class_override()) return *c;
  switch (s.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kResourceExhausted:
    case StatusCode::kDeadlineExceeded:
      return ErrorClass::kTransient;
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return ErrorClass::kAuth;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kUnimplemented:
    case StatusCode::kCancelled:
      return ErrorClass::kPermanent;
    default:
      return ErrorClass::kInternal;
  }
}

bool IsRetryable(const Status& s) { return !s.ok() && ClassOf(s) == ErrorClass::kTransient; }

#define MEND_DEFINE_ERROR(Name, Code) \
  Status Name(std::string_view message) { return Status(StatusCode::Code, message); }
MEND_DEFINE_ERROR(CancelledError, kCancelled)
MEND_DEFINE_ERROR(UnknownError, kUnknown)
MEND_DEFINE_ERROR(InvalidArgumentError, kInvalidArgument)
MEND_DEFINE_ERROR(DeadlineExceededError, kDeadlineExceeded)
MEND_DEFINE_ERROR(NotFoundError, kNotFound)
MEND_DEFINE_ERROR(AlreadyExistsError, kAlreadyExists)
MEND_DEFINE_ERROR(PermissionDeniedError, kPermissionDenied)
MEND_DEFINE_ERROR(ResourceExhaustedError, kResourceExhausted)
MEND_DEFINE_ERROR(FailedPreconditionError, kFailedPrecondition)
MEND_DEFINE_ERROR(AbortedError, kAborted)
MEND_DEFINE_ERROR(OutOfRangeError, kOutOfRange)
MEND_DEFINE_ERROR(UnimplementedError, kUnimplemented)
MEND_DEFINE_ERROR(InternalError, kInternal)
MEND_DEFINE_ERROR(UnavailableError, kUnavailable)
MEND_DEFINE_ERROR(DataLossError, kDataLoss)
MEND_DEFINE_ERROR(UnauthenticatedError, kUnauthenticated)
#undef MEND_DEFINE_ERROR

Status ResourceExhaustedError(std::string_view message, std::chrono::milliseconds retry_after) {
  return ResourceExhaustedError(message).WithRetryAfter(retry_after);
}

Status ErrnoToStatus(int err, std::string_view context) {
  std::string message(context);
  message += ": ";
  message += std::strerror(err);
  switch (err) {
    case ENOENT:
      return NotFoundError(message);
    case EEXIST:
      return AlreadyExistsError(message);
    case EACCES:
    case EPERM:
      return PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
      return ResourceExhaustedError(message);
    case EAGAIN:
    case EINTR:
      return UnavailableError(message);
    case EINVAL:
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
      return FailedPreconditionError(message);
    default:
      return InternalError(message);
  }
}

}  // namespace mend
