#include "obs/proto_wire_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "obs/proto_writer.h"
#include "tests/support/status_matchers.h"

namespace mend::obs::internal {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using Tag = ProtoWireReader::Tag;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out += static_cast<char>(b);
  return out;
}

TEST(ProtoWireReaderTest, ReadsEveryWireTypeTheWriterWrites) {
  ProtoWriter w;
  w.Varint(1, 300);
  w.Int64(2, -1);
  w.Fixed64(3, 0x0102030405060708);
  w.Fixed32(4, 0xdeadbeef);
  w.Bytes(5, "hello");
  const std::string data = w.Take();

  ProtoWireReader r(data);
  Result<Tag> tag = r.NextTag();
  ASSERT_THAT(tag, IsOk());
  EXPECT_EQ(tag->field, 1u);
  EXPECT_THAT(r.Varint(*tag), IsOkAndHolds(300u));
  tag = r.NextTag();
  EXPECT_THAT(r.Varint(*tag), IsOkAndHolds(~uint64_t{0}));
  tag = r.NextTag();
  EXPECT_THAT(r.Fixed64(*tag), IsOkAndHolds(0x0102030405060708u));
  tag = r.NextTag();
  EXPECT_THAT(r.Fixed32(*tag), IsOkAndHolds(0xdeadbeefu));
  tag = r.NextTag();
  EXPECT_THAT(r.Bytes(*tag), IsOkAndHolds(std::string_view("hello")));
  EXPECT_TRUE(r.done());
}

TEST(ProtoWireReaderTest, TruncatedVarintNamesItsOffset) {
  const std::string data = Bytes({0x08, 0x96});  // field 1 varint, continuation bit, then nothing
  ProtoWireReader r(data);
  Result<Tag> tag = r.NextTag();
  ASSERT_THAT(tag, IsOk());
  EXPECT_THAT(r.Varint(*tag),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("truncated varint at byte 1")));
}

TEST(ProtoWireReaderTest, VarintLongerThanSixtyFourBitsIsRejected) {
  std::string data = Bytes({0x08});
  for (int i = 0; i < 9; ++i) data += static_cast<char>(0xff);
  data += static_cast<char>(0x02);  // the tenth byte may only hold bit 63
  ProtoWireReader r(data);
  Result<Tag> tag = r.NextTag();
  EXPECT_THAT(r.Varint(*tag), StatusIs(StatusCode::kInvalidArgument, HasSubstr("64 bits")));
}

TEST(ProtoWireReaderTest, LengthPastTheEndIsRejected) {
  const std::string data = Bytes({0x0a, 0x05, 'a', 'b'});
  ProtoWireReader r(data);
  Result<Tag> tag = r.NextTag();
  EXPECT_THAT(r.Bytes(*tag),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("runs past the end")));
}

TEST(ProtoWireReaderTest, WrongWireTypeIsRejected) {
  const std::string data = Bytes({0x08, 0x01});
  ProtoWireReader r(data);
  Result<Tag> tag = r.NextTag();
  EXPECT_THAT(r.Bytes(*tag), StatusIs(StatusCode::kInvalidArgument,
                                      HasSubstr("wire type varint, want length-delimited")));
}

TEST(ProtoWireReaderTest, MalformedTagsAreRejected) {
  for (const std::string& data : {Bytes({0x00}), Bytes({0x0e}), Bytes({0x0f}), Bytes({0x0c})}) {
    ProtoWireReader r(data);
    EXPECT_THAT(r.NextTag(), StatusIs(StatusCode::kInvalidArgument)) << int(data[0]);
  }
}

TEST(ProtoWireReaderTest, SkipsEveryWireTypeAndNestedGroups) {
  ProtoWriter w;
  w.Varint(7, 1);
  w.Fixed64(8, 2);
  w.Fixed32(9, 3);
  w.Bytes(10, "xyz");
  std::string data = w.Take();
  // group 11 { varint 1; group 12 { bytes 2 } } then field 1 = 5
  data += Bytes({0x5b, 0x08, 0x01, 0x63, 0x12, 0x01, 'q', 0x64, 0x5c, 0x08, 0x05});
  ProtoWireReader r(data);
  for (int i = 0; i < 5; ++i) {
    Result<Tag> tag = r.NextTag();
    ASSERT_THAT(tag, IsOk());
    ASSERT_THAT(r.Skip(*tag, 8), IsOk()) << i;
  }
  Result<Tag> tag = r.NextTag();
  ASSERT_THAT(tag, IsOk());
  EXPECT_EQ(tag->field, 1u);
  EXPECT_THAT(r.Varint(*tag), IsOkAndHolds(5u));
  EXPECT_TRUE(r.done());
}

TEST(ProtoWireReaderTest, UnbalancedOrTooDeepGroupsAreRejected) {
  {
    const std::string data = Bytes({0x5b, 0x64});  // group 11 closed by end-group 12
    ProtoWireReader r(data);
    Result<Tag> tag = r.NextTag();
    EXPECT_THAT(r.Skip(*tag, 8), StatusIs(StatusCode::kInvalidArgument, HasSubstr("closes")));
  }
  {
    const std::string data = Bytes({0x5b, 0x08, 0x01});  // never closed
    ProtoWireReader r(data);
    Result<Tag> tag = r.NextTag();
    EXPECT_THAT(r.Skip(*tag, 8), StatusIs(StatusCode::kInvalidArgument));
  }
  {
    std::string data(100, static_cast<char>(0x5b));
    ProtoWireReader r(data);
    Result<Tag> tag = r.NextTag();
    EXPECT_THAT(r.Skip(*tag, 8),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("nested deeper than 8")));
  }
}

TEST(ProtoWireReaderTest, NestedReaderReportsOffsetsInTheOuterMessage) {
  // field 1 (message of 3 bytes at offset 2): field 2 varint, then a truncated varint.
  const std::string data = Bytes({0x0a, 0x03, 0x10, 0x80, 0x80});
  ProtoWireReader r(data);
  Result<Tag> tag = r.NextTag();
  Result<ProtoWireReader> sub = r.Message(*tag);
  ASSERT_THAT(sub, IsOk());
  Result<Tag> inner = sub->NextTag();
  EXPECT_THAT(sub->Varint(*inner),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("truncated varint at byte 3")));
}

}  // namespace
}  // namespace mend::obs::internal
