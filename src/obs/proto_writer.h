#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mend::obs {

// Appends protobuf wire-format fields to a string. Only what OTLP needs: varints (wire type 0),
// fixed64 and double (1), length-delimited bytes, strings and nested messages (2), fixed32 (5).
// Nested messages are written in place: Begin() reserves one length byte, End() writes the length
// and widens the prefix when the message turned out longer than 127 bytes (moving its bytes once).
// Not thread-safe.
class ProtoWriter {
 public:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

  void Varint(uint32_t field, uint64_t value) {
    Tag(field, kVarint);
    RawVarint(value);
  }
  // int32/int64/enum fields: negative values take ten bytes (two's complement), as the format asks.
  void Int64(uint32_t field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Fixed64(uint32_t field, uint64_t value) {
    Tag(field, kFixed64);
    RawLittleEndian(value, 8);
  }
  void Fixed32(uint32_t field, uint32_t value) {
    Tag(field, kFixed32);
    RawLittleEndian(value, 4);
  }
  void Double(uint32_t field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    Fixed64(field, bits);
  }
  void Bytes(uint32_t field, std::string_view bytes) {
    Tag(field, kLengthDelimited);
    RawVarint(bytes.size());
    out_.append(bytes);
  }

  // Starts a nested message in `field`; pass the result to End() once its fields are written.
  size_t Begin(uint32_t field) {
    Tag(field, kLengthDelimited);
    out_.push_back('\0');
    return out_.size();
  }
  void End(size_t start) {
    const size_t length = out_.size() - start;
    const size_t width = VarintSize(length);
    if (width > 1) out_.insert(start, width - 1, '\0');
    char* p = out_.data() + start - 1;
    uint64_t v = length;
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p = static_cast<char>(v);
  }

  std::string& buffer() { return out_; }
  std::string Take() { return std::move(out_); }

  static size_t VarintSize(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
      v >>= 7;
      ++n;
    }
    return n;
  }

 private:
  void Tag(uint32_t field, WireType type) { RawVarint((uint64_t{field} << 3) | type); }
  void RawVarint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void RawLittleEndian(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }

  std::string out_;
};

}  // namespace mend::obs
