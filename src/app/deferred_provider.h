#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/llm/provider.h"

namespace mend::app {

// A provider that is built on first use, so that commands which never call a model (pending,
// fork) need no model configuration or API key. Thread-safe.
class DeferredProvider final : public llm::LlmProvider {
 public:
  // Builds the real provider; `fallback_model` is the model to use when the configuration names
  // none ("" when not known).
  using Factory =
      std::function<Result<std::unique_ptr<llm::LlmProvider>>(const std::string& fallback_model)>;

  explicit DeferredProvider(Factory factory) : factory_(std::move(factory)) {}

  // Builds the provider unless it was already built or tried; returns the build's outcome (a
  // failed build is not retried and is returned again).
  Status Prepare(const std::string& fallback_model);
  bool built() const;

  // Prepare("") then the real provider's Complete; the build error when building failed.
  Result<llm::Completion> Complete(const llm::CompletionRequest& request) override;
  // The real provider's name; "deferred" before it is built.
  std::string_view name() const override;

 private:
  Factory factory_;
  mutable std::mutex mu_;
  bool tried_ = false;
  Status build_status_;
  std::unique_ptr<llm::LlmProvider> provider_;
};

}  // namespace mend::app
