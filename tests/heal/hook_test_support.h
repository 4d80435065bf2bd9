#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "mend/agent/agent.h"
#include "mend/base/manual_clock.h"
#include "mend/base/random.h"
#include "mend/llm/scripted_provider.h"
#include "mend/obs/events.h"
#include "tests/support/fake_checkpoint_store.h"

namespace mend::heal::testing {

// A tool with a fixed result that counts its executions. `error` results embed the call number so
// that failures differ only in digits (which the progress guard normalises away).
class FixedTool final : public agent::Tool {
 public:
  FixedTool(std::string name, std::string output, bool is_error)
      : output_(std::move(output)), is_error_(is_error) {
    spec_.name = std::move(name);
    spec_.description = "returns a fixed result";
  }
  const agent::ToolSpec& spec() const override { return spec_; }
  Result<agent::ToolResult> Execute(std::string_view, const agent::ToolContext&) override {
    int n = ++calls_;
    if (!is_error_) return agent::ToolResult::Ok(output_);
    return agent::ToolResult::Error(output_ + " (attempt " + std::to_string(n) + ")");
  }
  int calls() const { return calls_.load(); }

 private:
  agent::ToolSpec spec_;
  std::string output_;
  bool is_error_;
  std::atomic<int> calls_{0};
};

inline llm::ScriptedStep CallStep(std::string id, std::string tool, std::string args) {
  llm::ScriptedStep step;
  step.tool_calls.push_back({std::move(id), std::move(tool), std::move(args)});
  return step;
}

inline llm::ScriptedStep TextStep(std::string text) {
  llm::ScriptedStep step;
  step.text = std::move(text);
  return step;
}

// A real Agent over a scripted model, the fake store and an event bus recording into a sink.
struct AgentRig {
  AgentRig(std::vector<llm::ScriptedStep> script, std::vector<std::shared_ptr<agent::Tool>> tools)
      : model(std::move(script)) {
    bus.Subscribe(sink);
    agent::AgentSpec spec;
    spec.dir = "agents/helper";
    spec.name = "helper";
    spec.instructions = "You help.";
    agent::AgentOptions options;
    options.env.clock = &clock;
    options.env.random = &random;
    options.provider = &model;
    options.store = &store;
    options.events = &bus;
    options.holder = {"test", "host-a", "boot-1", 1};
    options.model_retry.retries = 0;  // a scripted error is an outage that lasts
    options.extra_tools = std::move(tools);
    auto created = agent::Agent::Create(std::move(spec), std::move(options));
    EXPECT_TRUE(created.ok()) << created.status();
    if (created.ok()) agent = std::move(created).value();
  }

  // The heal.action events, as "action:tool".
  std::vector<std::string> HealActions() const {
    std::vector<std::string> out;
    for (const obs::Event& e : sink->events()) {
      if (e.type() != "heal.action") continue;
      std::string action(e.Find("action").value_or("?"));
      std::string tool(e.Find("tool").value_or("?"));
      out.push_back(action.substr(1, action.size() - 2) + ":" + tool.substr(1, tool.size() - 2));
    }
    return out;
  }
  bool HasEvent(const std::string& type) const {
    for (const obs::Event& e : sink->events()) {
      if (e.type() == type) return true;
    }
    return false;
  }

  ManualClock clock;
  SeededRandom random{7};
  mend::testing::FakeCheckpointStore store{clock};
  obs::EventBus bus{clock};
  std::shared_ptr<obs::MemorySink> sink = std::make_shared<obs::MemorySink>();
  llm::ScriptedProvider model;
  std::unique_ptr<agent::Agent> agent;
};

// A call of `tool` in run `run` at `step`; `run_info` must outlive the result.
inline agent::ToolCallInfo CallOf(const agent::RunInfo& run_info, std::string tool,
                                  std::string args = "{}", int64_t step = 1) {
  agent::ToolCallInfo call;
  call.run = &run_info;
  call.step = step;
  call.call_id = "c" + std::to_string(step);
  call.tool = std::move(tool);
  call.arguments = std::move(args);
  return call;
}

}  // namespace mend::heal::testing
