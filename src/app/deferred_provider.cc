#include "app/deferred_provider.h"

namespace mend::app {

Status DeferredProvider::Prepare(const std::string& fallback_model) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tried_) return build_status_;
  tried_ = true;
  Result<std::unique_ptr<llm::LlmProvider>> built = factory_(fallback_model);
  if (!built.ok()) {
    build_status_ = built.status();
    return build_status_;
  }
  provider_ = *std::move(built);
  return OkStatus();
}

bool DeferredProvider::built() const {
  std::lock_guard<std::mutex> lock(mu_);
  return provider_ != nullptr;
}

Result<llm::Completion> DeferredProvider::Complete(const llm::CompletionRequest& request) {
  MEND_RETURN_IF_ERROR(Prepare(""));
  // Once built, the provider never changes, and it is itself thread-safe.
  llm::LlmProvider* provider = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    provider = provider_.get();
  }
  return provider->Complete(request);
}

std::string_view DeferredProvider::name() const {
  std::lock_guard<std::mutex> lock(mu_);
  return provider_ != nullptr ? provider_->name() : "deferred";
}

}  // namespace mend::app
