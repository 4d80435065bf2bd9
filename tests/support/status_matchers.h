#pragma once

#include <gmock/gmock.h>

#include "mend/base/result.h"

namespace mend::testing {

inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
const Status& GetStatus(const Result<T>& r) {
  return r.status();
}

// EXPECT_THAT(DoIt(), StatusIs(StatusCode::kDataLoss));
// EXPECT_THAT(DoIt(), StatusIs(StatusCode::kNotFound, ::testing::HasSubstr("x.wal")));
MATCHER_P(StatusIs, code, "has status code " + std::string(StatusCodeName(code))) {
  const Status& s = GetStatus(arg);
  *result_listener << "whose status is " << s.ToString();
  return s.code() == code;
}
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const Status& s = GetStatus(arg);
  *result_listener << "whose status is " << s.ToString();
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}
MATCHER(IsOk, "is OK") {
  const Status& s = GetStatus(arg);
  *result_listener << "whose status is " << s.ToString();
  return s.ok();
}

// EXPECT_THAT(store.Count(), IsOkAndHolds(3));
MATCHER_P(IsOkAndHolds, value_matcher, "is OK and holds a matching value") {
  if (!arg.ok()) {
    *result_listener << "whose status is " << arg.status().ToString();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

}  // namespace mend::testing

#define MEND_ASSERT_OK(expr) ASSERT_THAT((expr), ::mend::testing::IsOk())
#define MEND_EXPECT_OK(expr) EXPECT_THAT((expr), ::mend::testing::IsOk())
