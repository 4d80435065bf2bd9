#pragma once

#include <cstdint>
#include <string_view>

#include "mend/base/result.h"

namespace mend::obs::internal {

// Reads protobuf wire format (https://protobuf.dev/programming-guides/encoding/) from a byte
// range it does not own: tags, varints, fixed32/fixed64 and length-delimited values, and skips
// fields it is not asked to read, groups (wire types 3 and 4) included. It never reads past its
// range: a truncated varint, a length that runs past the end or a malformed tag is
// kInvalidArgument naming the byte offset (counted from the start of the outermost message, so a
// nested reader reports positions in the request body). Not thread-safe; cheap to copy.
class ProtoWireReader {
 public:
  enum WireType : uint32_t {
    kVarint = 0,
    kFixed64 = 1,
    kLengthDelimited = 2,
    kStartGroup = 3,
    kEndGroup = 4,
    kFixed32 = 5,
  };
  struct Tag {
    uint32_t field = 0;
    WireType type = kVarint;
    size_t offset = 0;  // of the tag in the outermost message
  };

  // `base` is the offset of `data` in the outermost message, for error messages.
  explicit ProtoWireReader(std::string_view data, size_t base = 0) : data_(data), base_(base) {}

  bool done() const { return pos_ == data_.size(); }

  // The next field's tag. kInvalidArgument for field number 0, a number above 2^29 - 1, wire type
  // 6 or 7, or a stray end-group tag.
  Result<Tag> NextTag();

  // The value of the field whose tag was just read, when it has the wire type the reader expects;
  // kInvalidArgument (naming the field) for another wire type or a truncated value.
  Result<uint64_t> Varint(const Tag& tag);
  Result<uint64_t> Fixed64(const Tag& tag);
  Result<uint32_t> Fixed32(const Tag& tag);
  Result<std::string_view> Bytes(const Tag& tag);
  // A length-delimited value as a reader of its own (positions stay absolute).
  Result<ProtoWireReader> Message(const Tag& tag);

  // Skips the value of the field whose tag was just read. A group is skipped up to its matching
  // end-group tag, through at most `max_group_depth` nested groups (kInvalidArgument beyond, so a
  // hostile message cannot make skipping unbounded work on the stack or the heap).
  Status Skip(const Tag& tag, int max_group_depth);

  // The offset of the next unread byte in the outermost message.
  size_t offset() const { return base_ + pos_; }

 private:
  Result<uint64_t> RawVarint();
  Status WrongType(const Tag& tag, WireType want) const;
  Status Truncated(std::string_view what, size_t need) const;
  Status SkipValue(const Tag& tag);

  std::string_view data_;
  size_t base_ = 0;
  size_t pos_ = 0;
};

}  // namespace mend::obs::internal
