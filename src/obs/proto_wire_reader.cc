#include "obs/proto_wire_reader.h"

#include <string>
#include <vector>

namespace mend::obs::internal {
namespace {

constexpr uint32_t kMaxFieldNumber = (1u << 29) - 1;

std::string_view TypeName(uint32_t type) {
  switch (type) {
    case ProtoWireReader::kVarint:
      return "varint";
    case ProtoWireReader::kFixed64:
      return "fixed64";
    case ProtoWireReader::kLengthDelimited:
      return "length-delimited";
    case ProtoWireReader::kStartGroup:
      return "start-group";
    case ProtoWireReader::kEndGroup:
      return "end-group";
    case ProtoWireReader::kFixed32:
      return "fixed32";
    default:
      return "invalid";
  }
}

}  // namespace

Result<uint64_t> ProtoWireReader::RawVarint() {
  const size_t start = pos_;
  uint64_t value = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos_ == data_.size()) {
      return InvalidArgumentError("truncated varint at byte " + std::to_string(base_ + start));
    }
    const auto b = static_cast<uint8_t>(data_[pos_++]);
    // The tenth byte holds bit 63 only.
    if (i == 9 && b > 1) break;
    value |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  return InvalidArgumentError("varint at byte " + std::to_string(base_ + start) +
                              " does not fit in 64 bits");
}

Result<ProtoWireReader::Tag> ProtoWireReader::NextTag() {
  const size_t start = offset();
  MEND_ASSIGN_OR_RETURN(uint64_t raw, RawVarint());
  const uint64_t field = raw >> 3;
  const auto type = static_cast<uint32_t>(raw & 7);
  if (field == 0 || field > kMaxFieldNumber) {
    return InvalidArgumentError("invalid field number " + std::to_string(field) + " at byte " +
                                std::to_string(start));
  }
  if (type == 6 || type == 7) {
    return InvalidArgumentError("invalid wire type " + std::to_string(type) + " at byte " +
                                std::to_string(start));
  }
  if (type == kEndGroup) {
    return InvalidArgumentError("end-group tag without a group at byte " + std::to_string(start));
  }
  return Tag{static_cast<uint32_t>(field), static_cast<WireType>(type), start};
}

Status ProtoWireReader::WrongType(const Tag& tag, WireType want) const {
  return InvalidArgumentError("field " + std::to_string(tag.field) + " at byte " +
                              std::to_string(tag.offset) + " has wire type " +
                              std::string(TypeName(tag.type)) + ", want " +
                              std::string(TypeName(want)));
}

Status ProtoWireReader::Truncated(std::string_view what, size_t need) const {
  return InvalidArgumentError(std::string(what) + " at byte " + std::to_string(offset()) +
                              " needs " + std::to_string(need) + " bytes, " +
                              std::to_string(data_.size() - pos_) + " left in its message");
}

Result<uint64_t> ProtoWireReader::Varint(const Tag& tag) {
  if (tag.type != kVarint) return WrongType(tag, kVarint);
  return RawVarint();
}

Result<uint64_t> ProtoWireReader::Fixed64(const Tag& tag) {
  if (tag.type != kFixed64) return WrongType(tag, kFixed64);
  if (data_.size() - pos_ < 8) return Truncated("fixed64 value", 8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
  pos_ += 8;
  return v;
}

Result<uint32_t> ProtoWireReader::Fixed32(const Tag& tag) {
  if (tag.type != kFixed32) return WrongType(tag, kFixed32);
  if (data_.size() - pos_ < 4) return Truncated("fixed32 value", 4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
  pos_ += 4;
  return v;
}

Result<std::string_view> ProtoWireReader::Bytes(const Tag& tag) {
  if (tag.type != kLengthDelimited) return WrongType(tag, kLengthDelimited);
  MEND_ASSIGN_OR_RETURN(uint64_t length, RawVarint());
  if (length > data_.size() - pos_) {
    return InvalidArgumentError("length " + std::to_string(length) + " of field " +
                                std::to_string(tag.field) + " at byte " + std::to_string(offset()) +
                                " runs past the end of its message (" +
                                std::to_string(data_.size() - pos_) + " bytes left)");
  }
  std::string_view value = data_.substr(pos_, length);
  pos_ += length;
  return value;
}

Result<ProtoWireReader> ProtoWireReader::Message(const Tag& tag) {
  MEND_ASSIGN_OR_RETURN(std::string_view bytes, Bytes(tag));
  return ProtoWireReader(bytes, offset() - bytes.size());
}

Status ProtoWireReader::SkipValue(const Tag& tag) {
  switch (tag.type) {
    case kVarint:
      return RawVarint().status();
    case kFixed64:
      return Fixed64(tag).status();
    case kFixed32:
      return Fixed32(tag).status();
    case kLengthDelimited:
      return Bytes(tag).status();
    default:
      return InternalError("SkipValue of a group tag");
  }
}

Status ProtoWireReader::Skip(const Tag& tag, int max_group_depth) {
  if (tag.type != kStartGroup) return SkipValue(tag);
  // The field numbers of the groups being skipped, innermost last: each must end with its own
  // end-group tag.
  std::vector<uint32_t> open = {tag.field};
  while (!open.empty()) {
    const size_t start = offset();
    MEND_ASSIGN_OR_RETURN(uint64_t raw, RawVarint());
    const uint64_t field = raw >> 3;
    const auto type = static_cast<uint32_t>(raw & 7);
    if (field == 0 || field > kMaxFieldNumber || type == 6 || type == 7) {
      return InvalidArgumentError("malformed tag inside a group at byte " + std::to_string(start));
    }
    const Tag inner{static_cast<uint32_t>(field), static_cast<WireType>(type), start};
    if (type == kEndGroup) {
      if (inner.field != open.back()) {
        return InvalidArgumentError("end-group tag of field " + std::to_string(field) +
                                    " at byte " + std::to_string(start) + " closes group " +
                                    std::to_string(open.back()));
      }
      open.pop_back();
    } else if (type == kStartGroup) {
      if (open.size() >= static_cast<size_t>(max_group_depth)) {
        return InvalidArgumentError("groups nested deeper than " + std::to_string(max_group_depth) +
                                    " at byte " + std::to_string(start));
      }
      open.push_back(inner.field);
    } else {
      MEND_RETURN_IF_ERROR(SkipValue(inner));
    }
  }
  return OkStatus();
}

}  // namespace mend::obs::internal
