// The CheckpointStore conformance suite (instantiated per implementation, e.g. in
// sqlite_store_test.cc).

#include "tests/store/checkpoint_store_conformance.h"

#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::store::testing {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

void CheckpointStoreConformanceTest::SetUp() {
  StoreTestEnv env{clock_, local_, [this](int64_t pid) {
                     std::lock_guard<std::mutex> lock(mu_);
                     return dead_pids_.count(pid) == 0;
                   }};
  store_ = GetParam().factory(env);
  ASSERT_NE(store_, nullptr);
}

void CheckpointStoreConformanceTest::MakeRun(const std::string& id, const std::string& task) {
  RunRecord run;
  run.id = id;
  run.agent = "a";
  run.agent_dir = "agents/a";
  run.task = task;
  MEND_ASSERT_OK(store_->CreateRun(run));
}

Lease CheckpointStoreConformanceTest::MustClaim(const std::string& id, const LeaseHolder& holder) {
  Result<Lease> lease = store_->Claim(id, holder, seconds(30));
  EXPECT_THAT(lease, IsOk());
  return lease.ok() ? *lease : Lease{};
}

Checkpoint CheckpointStoreConformanceTest::Cp(int64_t step, std::vector<std::string> messages,
                                              std::string state) {
  Checkpoint cp;
  cp.step = step;
  cp.new_messages = std::move(messages);
  cp.state = std::move(state);
  return cp;
}

void CheckpointStoreConformanceTest::MarkDead(int64_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  dead_pids_.insert(pid);
}

namespace {

TEST_P(CheckpointStoreConformanceTest, CreateAndGetRoundTrip) {
  RunRecord run;
  run.id = "r1";
  run.agent = "coder";
  run.agent_dir = "agents/coder";
  run.task = "fix the bug";
  run.metadata = R"({"kind":"send"})";
  MEND_ASSERT_OK(store_->CreateRun(run));
  Result<RunRecord> got = store_->GetRun("r1");
  MEND_ASSERT_OK(got);
  EXPECT_EQ(got->agent, "coder");
  EXPECT_EQ(got->agent_dir, "agents/coder");
  EXPECT_EQ(got->task, "fix the bug");
  EXPECT_EQ(got->metadata, R"({"kind":"send"})");
  EXPECT_EQ(got->status, RunStatus::kRunning);
  EXPECT_EQ(got->step, 0);
  EXPECT_EQ(got->epoch, 0);
  EXPECT_FALSE(got->lease_holder.has_value());
  EXPECT_FALSE(got->last_error.has_value());
  EXPECT_EQ(got->created_at, clock_.Now());
}

TEST_P(CheckpointStoreConformanceTest, DuplicateIdIsAlreadyExists) {
  MakeRun("r1");
  RunRecord again;
  again.id = "r1";
  EXPECT_THAT(store_->CreateRun(again), StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(store_->CreateRun(RunRecord{}), StatusIs(StatusCode::kInvalidArgument));
}

TEST_P(CheckpointStoreConformanceTest, UnknownRunIsNotFound) {
  EXPECT_THAT(store_->GetRun("nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Load("nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->History("nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Claim("nope", local_, seconds(30)), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->DeleteRun("nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->UpdateUnleased("nope", RunUpdate{}), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Fork("nope", 0, "f"), StatusIs(StatusCode::kNotFound));
}

TEST_P(CheckpointStoreConformanceTest, DeleteRemovesRunAndConversation) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, {"m1"}, "s1"), {}));
  MEND_ASSERT_OK(store_->Release(lease));
  MEND_ASSERT_OK(store_->DeleteRun("r1"));
  EXPECT_THAT(store_->GetRun("r1"), StatusIs(StatusCode::kNotFound));
  MakeRun("r1");  // the id is free again, with nothing left of the old conversation
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 0);
  EXPECT_TRUE(snap->messages.empty());
  EXPECT_THAT(store_->History("r1"),
              ::testing::Property(&Result<std::vector<CheckpointInfo>>::ok, true));
  EXPECT_TRUE(store_->History("r1")->empty());
}

TEST_P(CheckpointStoreConformanceTest, SaveMustBeTheNextStep) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  EXPECT_THAT(store_->Save(lease, Cp(2, {"m"}, "s"), {}),
              StatusIs(StatusCode::kFailedPrecondition));
  MEND_EXPECT_OK(store_->Save(lease, Cp(1, {"m"}, "s"), {}));
  EXPECT_THAT(store_->Save(lease, Cp(1, {"m"}, "s"), {}),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(store_->GetRun("r1")->step, 1);
  EXPECT_EQ(store_->Load("r1")->messages.size(), 1u);
}

TEST_P(CheckpointStoreConformanceTest, LoadLatestAndOlderSteps) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, {"u1", "a1"}, "s1"), {}));
  MEND_ASSERT_OK(store_->Save(lease, Cp(2, {"t2"}, "s2"), {}));
  MEND_ASSERT_OK(store_->Save(lease, Cp(3, {"a3"}, "s3"), {}));
  Result<RunSnapshot> latest = store_->Load("r1");
  MEND_ASSERT_OK(latest);
  EXPECT_EQ(latest->step, 3);
  EXPECT_EQ(latest->state, "s3");
  EXPECT_THAT(latest->messages, ElementsAre("u1", "a1", "t2", "a3"));
  EXPECT_EQ(latest->run.step, 3);
  Result<RunSnapshot> first = store_->Load("r1", 1);
  MEND_ASSERT_OK(first);
  EXPECT_EQ(first->step, 1);
  EXPECT_EQ(first->state, "s1");
  EXPECT_THAT(first->messages, ElementsAre("u1", "a1"));
  EXPECT_THAT(store_->Load("r1", 4), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Load("r1", -1), StatusIs(StatusCode::kNotFound));
}

TEST_P(CheckpointStoreConformanceTest, LoadBeforeFirstSaveIsEmpty) {
  MakeRun("r1");
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->step, 0);
  EXPECT_TRUE(snap->messages.empty());
  EXPECT_EQ(snap->state, "");
  EXPECT_EQ(snap->run.id, "r1");
}

// (run id, step, state) of each entry, for comparing LatestStates answers.
std::vector<std::tuple<std::string, int64_t, std::string>> Rows(
    const std::vector<CheckpointState>& states) {
  std::vector<std::tuple<std::string, int64_t, std::string>> rows;
  for (const CheckpointState& s : states) {
    EXPECT_THAT(s.status, IsOk()) << s.run_id;
    rows.emplace_back(s.run_id, s.step, s.state);
  }
  return rows;
}

TEST_P(CheckpointStoreConformanceTest, LatestStatesGiveEachRunsNewestStateInTheAskedOrder) {
  // An id with the characters an array literal quotes, and a state that is bytes.
  const std::string odd = "q\"u,o{t}e\\ d";
  const std::string binary("x\0y\xff", 4);
  for (const std::string& id : {std::string("r1"), std::string("r2"), std::string("r3"), odd}) {
    MakeRun(id);
  }
  Lease r1 = MustClaim("r1");
  MEND_ASSERT_OK(store_->Save(r1, Cp(1, {"u1"}, "r1 at 1"), {}));
  MEND_ASSERT_OK(store_->Save(r1, Cp(2, {"a1"}, "r1 at 2"), {}));
  Lease r3 = MustClaim("r3");
  MEND_ASSERT_OK(store_->Save(r3, Cp(1, {"u3"}, binary), {}));
  Lease q = MustClaim(odd);
  MEND_ASSERT_OK(store_->Save(q, Cp(1, {"uq"}, "odd at 1"), {}));
  MEND_ASSERT_OK(store_->Fork("r1", 1, "r1.fork").status());

  // r2 has no checkpoint and "nope" is no run: both are left out; a repeat is listed once.
  Result<std::vector<CheckpointState>> states =
      store_->LatestStates({"r3", "nope", "r2", "r1", "r3", "r1.fork", odd});
  MEND_ASSERT_OK(states);
  using Row = std::tuple<std::string, int64_t, std::string>;
  EXPECT_THAT(Rows(*states), ElementsAre(Row{"r3", 1, binary}, Row{"r1", 2, "r1 at 2"},
                                         Row{"r1.fork", 1, "r1 at 1"}, Row{odd, 1, "odd at 1"}));
  // Each state is the one Load gives.
  for (const CheckpointState& s : *states) EXPECT_EQ(s.state, store_->Load(s.run_id)->state);

  Result<std::vector<CheckpointState>> none = store_->LatestStates({});
  MEND_ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

TEST_P(CheckpointStoreConformanceTest, HistoryIsARingOfTheNewest50) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  for (int step = 1; step <= 51; ++step) {
    MEND_ASSERT_OK(store_->Save(lease, Cp(step, {"m" + std::to_string(step)}, "s"), {}));
  }
  Result<std::vector<CheckpointInfo>> history = store_->History("r1");
  MEND_ASSERT_OK(history);
  ASSERT_EQ(history->size(), 50u);
  EXPECT_EQ(history->front().step, 2);
  EXPECT_EQ(history->front().message_count, 2);
  EXPECT_EQ(history->back().step, 51);
  EXPECT_EQ(history->back().message_count, 51);
  EXPECT_THAT(store_->Load("r1", 1), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(store_->Load("r1", 2)->messages, ElementsAre("m1", "m2"));
  Result<RunSnapshot> latest = store_->Load("r1");
  MEND_ASSERT_OK(latest);
  ASSERT_EQ(latest->messages.size(), 51u);
  EXPECT_EQ(latest->messages.front(), "m1");
  EXPECT_EQ(latest->messages.back(), "m51");
}

TEST_P(CheckpointStoreConformanceTest, ConversationIsTheConcatenationOfNewMessages) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  std::vector<std::string> all;
  for (int step = 1; step <= 10; ++step) {
    std::vector<std::string> fresh;
    for (int i = 0; i < step % 3; ++i)
      fresh.push_back(std::to_string(step) + "." + std::to_string(i));
    all.insert(all.end(), fresh.begin(), fresh.end());
    MEND_ASSERT_OK(store_->Save(lease, Cp(step, fresh, "s" + std::to_string(step)), {}));
  }
  std::string binary("a\0b\xff", 4);  // messages are bytes, not C strings
  all.push_back(binary);
  MEND_ASSERT_OK(store_->Save(lease, Cp(11, {binary}, ""), {}));
  Result<RunSnapshot> snap = store_->Load("r1");
  MEND_ASSERT_OK(snap);
  EXPECT_EQ(snap->messages, all);
  EXPECT_EQ(snap->state, "");
}

TEST_P(CheckpointStoreConformanceTest, StatusTransitionsFollowTheMachine) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  auto to = [](RunStatus s) {
    RunUpdate u;
    u.status = s;
    return u;
  };
  MEND_EXPECT_OK(store_->Update(lease, to(RunStatus::kWaiting)));
  EXPECT_THAT(store_->Update(lease, to(RunStatus::kCompleted)),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(store_->Update(lease, to(RunStatus::kFailed)),
              StatusIs(StatusCode::kFailedPrecondition));
  MEND_EXPECT_OK(store_->Update(lease, to(RunStatus::kRunning)));
  MEND_EXPECT_OK(store_->Update(lease, to(RunStatus::kFailed)));
  MEND_EXPECT_OK(store_->UpdateUnleased("r1", to(RunStatus::kQuarantined)));
  EXPECT_THAT(store_->UpdateUnleased("r1", to(RunStatus::kWaiting)),
              StatusIs(StatusCode::kFailedPrecondition));
  MEND_EXPECT_OK(store_->Update(lease, to(RunStatus::kRunning)));
  MEND_EXPECT_OK(store_->Save(lease, Cp(1, {"done"}, "s"), to(RunStatus::kCompleted)));
  EXPECT_EQ(store_->GetRun("r1")->status, RunStatus::kCompleted);
  EXPECT_THAT(store_->UpdateUnleased("r1", to(RunStatus::kRunning)),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(store_->Save(lease, Cp(2, {}, "s"), {}), StatusIs(StatusCode::kFailedPrecondition));
  MEND_EXPECT_OK(store_->Release(lease));
  EXPECT_THAT(store_->Claim("r1", local_, seconds(30)), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(store_->GetRun("r1")->status, RunStatus::kCompleted);
}

TEST_P(CheckpointStoreConformanceTest, LastErrorRoundTripsAndClears) {
  MakeRun("r1");
  Lease lease = MustClaim("r1");
  RunUpdate fail;
  fail.status = RunStatus::kFailed;
  fail.last_error = RunError{"UNAVAILABLE", "connection refused", "transient", true};
  MEND_ASSERT_OK(store_->Save(lease, Cp(1, {"m"}, "s"), fail));
  Result<RunRecord> run = store_->GetRun("r1");
  MEND_ASSERT_OK(run);
  ASSERT_TRUE(run->last_error.has_value());
  EXPECT_EQ(run->last_error->code, "UNAVAILABLE");
  EXPECT_EQ(run->last_error->message, "connection refused");
  EXPECT_EQ(run->last_error->error_class, "transient");
  EXPECT_TRUE(run->last_error->retryable);
  RunUpdate permanent;
  permanent.last_error = RunError{"MEND_RUN_NO_PROGRESS", "stuck", "permanent", false};
  MEND_ASSERT_OK(store_->UpdateUnleased("r1", permanent));
  EXPECT_FALSE(store_->GetRun("r1")->last_error->retryable);
  EXPECT_EQ(store_->GetRun("r1")->last_error->error_class, "permanent");
  RunUpdate clear;
  clear.last_error = std::optional<RunError>();
  MEND_ASSERT_OK(store_->Update(lease, clear));
  EXPECT_FALSE(store_->GetRun("r1")->last_error.has_value());
  EXPECT_EQ(store_->GetRun("r1")->status, RunStatus::kFailed);
}

}  // namespace
}  // namespace mend::store::testing
