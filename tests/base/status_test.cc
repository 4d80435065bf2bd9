#include "mend/base/status.h"

#include <gtest/gtest.h>

#include "mend/base/result.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = DataLossError("bad crc in x.wal");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "DATA_LOSS: bad crc in x.wal");
  EXPECT_THAT(s, StatusIs(StatusCode::kDataLoss, HasSubstr("x.wal")));
}

TEST(StatusTest, ClassesFollowTheCode) {
  EXPECT_EQ(ClassOf(UnavailableError("x")), ErrorClass::kTransient);
  EXPECT_EQ(ClassOf(ResourceExhaustedError("x")), ErrorClass::kTransient);
  EXPECT_EQ(ClassOf(DeadlineExceededError("x")), ErrorClass::kTransient);
  EXPECT_EQ(ClassOf(UnauthenticatedError("x")), ErrorClass::kAuth);
  EXPECT_EQ(ClassOf(PermissionDeniedError("x")), ErrorClass::kAuth);
  EXPECT_EQ(ClassOf(InvalidArgumentError("x")), ErrorClass::kPermanent);
  EXPECT_EQ(ClassOf(DataLossError("x")), ErrorClass::kInternal);
  EXPECT_TRUE(IsRetryable(UnavailableError("x")));
  EXPECT_FALSE(IsRetryable(InvalidArgumentError("x")));
  EXPECT_FALSE(IsRetryable(OkStatus()));
  EXPECT_EQ(ClassOf(InternalError("x").WithClass(ErrorClass::kTransient)), ErrorClass::kTransient);
}

TEST(StatusTest, DetailsSurviveCopies) {
  Status s =
      ResourceExhaustedError("rate limited", std::chrono::seconds(7)).WithDetailCode("http_429");
  Status copy = s.Annotate("openai");
  EXPECT_EQ(copy.message(), "openai: rate limited");
  EXPECT_EQ(copy.retry_after(), std::chrono::milliseconds(7000));
  EXPECT_EQ(copy.detail_code(), "http_429");
  EXPECT_EQ(s.message(), "rate limited");
}

TEST(StatusTest, ErrnoMapping) {
  EXPECT_THAT(ErrnoToStatus(ENOENT, "open a"),
              StatusIs(StatusCode::kNotFound, HasSubstr("open a")));
  EXPECT_THAT(ErrnoToStatus(ENOSPC, "write"), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_THAT(ErrnoToStatus(EIO, "fsync"), StatusIs(StatusCode::kInternal));
}

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  MEND_ASSIGN_OR_RETURN(int half, Half(x));
  MEND_ASSIGN_OR_RETURN(half, Half(half));
  return half;
}

Status CheckEven(int x) {
  MEND_RETURN_IF_ERROR(Half(x));
  MEND_RETURN_IF_ERROR(OkStatus());
  return OkStatus();
}

TEST(ResultTest, MacrosPropagate) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_THAT(Quarter(6), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(CheckEven(4), IsOk());
  EXPECT_THAT(CheckEven(3), StatusIs(StatusCode::kInvalidArgument));
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 5);
  EXPECT_EQ(Result<int>(NotFoundError("x")).value_or(3), 3);
}

}  // namespace
}  // namespace mend
