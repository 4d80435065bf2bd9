#pragma once

// Hashes and checksums: SHA-256 (ids, content addresses, fingerprints), CRC-32/IEEE (the WAL
// records of docs/wal_format.md), hex encoding, and a constant-time comparison for tokens a client
// presents. Pure and thread-safe.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace mend {

/// A SHA-256 digest: 32 raw bytes.
using Sha256Digest = std::array<std::uint8_t, 32>;

/// The SHA-256 digest of `data`. Thread-safe. OpenSSL only fails here when it cannot allocate
/// memory; that terminates the process like any other allocation failure.
Sha256Digest Sha256(std::string_view data);

/// The SHA-256 digest of `data` as 64 lowercase hexadecimal characters. Thread-safe.
std::string Sha256Hex(std::string_view data);

/// `bytes` as lowercase hexadecimal, two characters per byte.
std::string HexEncode(std::string_view bytes);

/// Whether `a` and `b` are equal, compared in a time that depends on their lengths only, not on
/// where they differ: for secrets a client presents (tokens), so timing does not tell how much of
/// a guess was right.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

/// CRC-32/IEEE (the zlib, PNG and Go hash/crc32.ChecksumIEEE checksum) of `data`.
/// Crc32("123456789") == 0xCBF43926. Thread-safe.
std::uint32_t Crc32(std::string_view data);

/// Continues a CRC-32/IEEE over more bytes: Crc32Extend(Crc32(a), b) == Crc32(a + b), and
/// Crc32Extend(0, a) == Crc32(a). Use it to checksum data that arrives in pieces.
std::uint32_t Crc32Extend(std::uint32_t crc, std::string_view data);

}  // namespace mend
