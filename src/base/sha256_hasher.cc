#include "mend/base/sha256_hasher.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace mend {

struct Sha256Hasher::State {
  EVP_MD_CTX* ctx = nullptr;

  State() : ctx(EVP_MD_CTX_new()) { Restart(); }
  ~State() { EVP_MD_CTX_free(ctx); }
  // As in Sha256(): OpenSSL fails here only without memory.
  void Restart() {
    if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) std::abort();
  }
};

Sha256Hasher::Sha256Hasher() : state_(std::make_unique<State>()) {}
Sha256Hasher::~Sha256Hasher() = default;
Sha256Hasher::Sha256Hasher(Sha256Hasher&&) noexcept = default;
Sha256Hasher& Sha256Hasher::operator=(Sha256Hasher&&) noexcept = default;

void Sha256Hasher::Update(std::string_view data) {
  if (data.empty()) return;
  if (EVP_DigestUpdate(state_->ctx, data.data(), data.size()) != 1) std::abort();
}

Sha256Digest Sha256Hasher::Finish() {
  Sha256Digest digest{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(state_->ctx, digest.data(), &size) != 1 || size != digest.size()) {
    std::abort();
  }
  state_->Restart();
  return digest;
}

std::string Sha256Hasher::FinishHex() {
  const Sha256Digest digest = Finish();
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

}  // namespace mend
