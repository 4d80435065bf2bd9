#include "mend/base/hash.h"

#include <openssl/evp.h>
#include <zlib.h>

#include <cstdlib>

namespace mend {

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest digest{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate its context; there is no meaningful
  // recovery for a hash, so treat it like operator new failing.
  if (EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.size()) {
    std::abort();
  }
  return digest;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0F]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  const Sha256Digest digest = Sha256(data);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::uint32_t Crc32Extend(std::uint32_t crc, std::string_view data) {
  // zlib treats a null buffer as a request for the initial value and returns 0, which an empty
  // string_view may carry.
  if (data.empty()) return crc;
  // crc32_z takes a size_t length, so inputs above 4 GiB need no chunking.
  return static_cast<std::uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

std::uint32_t Crc32(std::string_view data) { return Crc32Extend(0, data); }

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

}  // namespace mend
