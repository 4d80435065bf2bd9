#pragma once

// Result<T>, a value or an error Status (Abseil's StatusOr), and the macros MEND_RETURN_IF_ERROR
// and MEND_ASSIGN_OR_RETURN that pass errors up. mend does not throw: every fallible function
// returns a Status or a Result.

#include <cassert>
#include <optional>
#include <type_traits>
#include <utility>

#include "mend/base/status.h"

namespace mend {

/// Result<T> holds either a T or a non-OK Status (Abseil's StatusOr). Accessing the value of an
/// error is a programmer error (asserted in debug builds). Thread-compatible.
template <typename T>
class [[nodiscard]] Result {
 public:
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "Result<Status> is not allowed");

  ///@{
  /// From an error. Passing an OK status is a programmer error; it becomes kInternal.
  Result(const Status& status) : status_(status) { CheckNotOk(); }  // NOLINT: implicit by design
  Result(Status&& status) : status_(std::move(status)) { CheckNotOk(); }  // NOLINT
  ///@}

  /// From a value (implicit so that `return value;` works).
  template <typename U = T,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, Result<T>>>>
  Result(U&& value) : value_(std::forward<U>(value)) {}  // NOLINT

  ///@{
  /// Copyable and movable as T is.
  Result(const Result&) = default;
  Result(Result&&) = default;
  Result& operator=(const Result&) = default;
  Result& operator=(Result&&) = default;
  ///@}

  /// Whether this holds a value.
  bool ok() const { return value_.has_value(); }
  ///@{
  /// OK when this holds a value; the error otherwise.
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }
  ///@}

  ///@{
  /// The value; asking for the value of an error is a programmer error.
  const T& value() const& { return Checked(), *value_; }
  T& value() & { return Checked(), *value_; }
  T&& value() && { return Checked(), std::move(*value_); }
  ///@}

  ///@{
  /// value(), as a pointer-like accessor.
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  ///@}

  /// The value, or `fallback` when this holds an error.
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void CheckNotOk() {
    assert(!status_.ok() && "Result constructed from an OK Status");
    if (status_.ok()) status_ = InternalError("Result constructed from an OK Status");
  }
  void Checked() const { assert(ok() && "value() of an error Result"); }

  Status status_;
  std::optional<T> value_;
};

namespace internal {
inline const Status& AsStatus(const Status& s) { return s; }
inline Status AsStatus(Status&& s) { return std::move(s); }
template <typename T>
const Status& AsStatus(const Result<T>& r) {
  return r.status();
}
template <typename T>
Status AsStatus(Result<T>&& r) {
  return std::move(r).status();
}
}  // namespace internal

}  // namespace mend

#define MEND_INTERNAL_CONCAT_INNER(a, b) a##b
#define MEND_INTERNAL_CONCAT(a, b) MEND_INTERNAL_CONCAT_INNER(a, b)

/// Evaluates `expr` (a Status or a Result<T>) and returns its Status from the enclosing function
/// when it is not OK.
#define MEND_RETURN_IF_ERROR(expr)                                                 \
  do {                                                                             \
    if (auto&& mend_status_or_result_ = (expr); !mend_status_or_result_.ok()) {    \
      return ::mend::internal::AsStatus(                                           \
          std::forward<decltype(mend_status_or_result_)>(mend_status_or_result_)); \
    }                                                                              \
  } while (false)

/// MEND_ASSIGN_OR_RETURN(lhs, expr): evaluates the Result<T> `expr`; on error returns its Status,
/// otherwise moves the value into `lhs`, which may be a declaration (`auto x`) or an lvalue.
#define MEND_ASSIGN_OR_RETURN(lhs, expr) \
  MEND_INTERNAL_ASSIGN_OR_RETURN(MEND_INTERNAL_CONCAT(mend_result_, __LINE__), lhs, expr)
#define MEND_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(tmp).value()
