#pragma once

// Sha256Hasher, SHA-256 over data that arrives in pieces, for files too large to hold in memory
// (the checksums of `mend backup`). Not thread-safe: one object per digest.

#include <memory>
#include <string>
#include <string_view>

#include "mend/base/hash.h"

namespace mend {

/// SHA-256 over data that arrives in pieces, for files too large to hold in memory (the checksums
/// of `mend backup`'s manifest). Sha256Hasher h; h.Update(a); h.Update(b); h.FinishHex() equals
/// Sha256Hex(a + b). Not thread-safe; one object per digest. Move-only. OpenSSL only fails here
/// when it cannot allocate memory, which terminates the process like any allocation failure. A
/// moved-from hasher may only be assigned to or destroyed.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  ///@{
  /// Moves the digest in progress.
  Sha256Hasher(Sha256Hasher&&) noexcept;
  Sha256Hasher& operator=(Sha256Hasher&&) noexcept;
  ///@}

  /// Adds `data` to the digest.
  void Update(std::string_view data);
  /// The digest of everything passed to Update; the hasher then starts over, empty.
  Sha256Digest Finish();
  /// Finish() as 64 lowercase hexadecimal characters.
  std::string FinishHex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mend
