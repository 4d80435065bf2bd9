// PgPool and PgBudget (include/mend/db/pg_conn.h): connections handed out in the order they were
// asked for, within a pool and across the pools of one budget.
#include <algorithm>
#include <chrono>
#include <deque>
#include <utility>

#include "db/pg_activity.h"
#include "mend/db/pg_conn.h"

namespace mend::db {

ActivityCounters& Activity() {
  static ActivityCounters* const counters = new ActivityCounters();
  return *counters;
}

PgActivity ProcessPgActivity() {
  const ActivityCounters& c = Activity();
  PgActivity out;
  out.connections_open = c.connections_open.load(std::memory_order_relaxed);
  out.connections_in_use = c.connections_in_use.load(std::memory_order_relaxed);
  out.acquires = c.acquires.load(std::memory_order_relaxed);
  out.waits = c.waits.load(std::memory_order_relaxed);
  out.wait_seconds = static_cast<double>(c.wait_nanoseconds.load(std::memory_order_relaxed)) / 1e9;
  out.round_trips = c.round_trips.load(std::memory_order_relaxed);
  out.errors = c.errors.load(std::memory_order_relaxed);
  out.statements_reprepared = c.statements_reprepared.load(std::memory_order_relaxed);
  return out;
}

// A pool's connections and callers. Shared with its budget, which takes idle connections away
// (under mu, with the budget's lock held first: the order is always budget, then pool).
struct PgPool::State {
  explicit State(int size) : size(size) {}

  const int size;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<uint64_t> queue;                 // callers' tickets, in order of asking
  uint64_t next_ticket = 0;                   // guarded by mu
  std::vector<std::unique_ptr<PgConn>> idle;  // guarded by mu
  int open = 0;  // connections in use, idle or being opened; guarded by mu
};

// A pool waiting for the budget: what it is given.
struct PgBudget::Waiter {
  const PgPool::State* pool = nullptr;
  bool granted = false;
  std::unique_ptr<PgConn> conn;  // a connection handed over, or none (the right to open one)
  const PgPool::State* from = nullptr;
};

namespace {

using SteadyClock = std::chrono::steady_clock;

void CountAcquire(SteadyClock::time_point asked, bool waited) {
  ActivityCounters& c = Activity();
  c.acquires.fetch_add(1, std::memory_order_relaxed);
  c.connections_in_use.fetch_add(1, std::memory_order_relaxed);
  if (!waited) return;
  c.waits.fetch_add(1, std::memory_order_relaxed);
  c.wait_nanoseconds.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - asked).count(),
      std::memory_order_relaxed);
}

}  // namespace

PgBudget::PgBudget(int max_connections) : max_(std::max(1, max_connections)) {}

int PgBudget::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

int PgBudget::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(waiters_.size());
}

void PgBudget::Register(const std::shared_ptr<PgPool::State>& pool) {
  std::lock_guard<std::mutex> lock(mu_);
  pools_.push_back(pool);
}

PgBudget::Grant PgBudget::Take(const PgPool::State* pool) {
  std::unique_lock<std::mutex> lock(mu_);
  if (waiters_.empty()) {
    if (held_ < max_) {
      held_ += 1;
      return {};
    }
    // None left: an idle connection of any pool changes hands (taken under the pool's lock,
    // after ours, as everywhere).
    for (const std::weak_ptr<PgPool::State>& p : pools_) {
      std::shared_ptr<PgPool::State> other = p.lock();
      if (other == nullptr) continue;
      std::lock_guard<std::mutex> other_lock(other->mu);
      if (other->idle.empty()) continue;
      Grant grant{std::move(other->idle.back()), other.get() != pool, false};
      other->idle.pop_back();
      other->open -= 1;
      other->cv.notify_all();
      return grant;
    }
  }
  // Every connection is in use: the next one returned or closed comes to the first waiter.
  Waiter me;
  me.pool = pool;
  waiters_.push_back(&me);
  cv_.wait(lock, [&] { return me.granted; });
  const bool moved = me.conn != nullptr && me.from != pool;
  return Grant{std::move(me.conn), moved, true};
}

void PgBudget::Return(const std::shared_ptr<PgPool::State>& pool, std::unique_ptr<PgConn> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  std::lock_guard<std::mutex> pool_lock(pool->mu);
  if (waiters_.empty()) {
    pool->idle.push_back(std::move(conn));
  } else {
    // The connection leaves the pool for the first waiter, whichever pool it is of: waiters are
    // served in the order they asked, whatever pool they asked in.
    Waiter* first = waiters_.front();
    waiters_.erase(waiters_.begin());
    first->conn = std::move(conn);
    first->from = pool.get();
    first->granted = true;
    pool->open -= 1;
    cv_.notify_all();
  }
  pool->cv.notify_all();
}

void PgBudget::Release(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseLocked(n);
}

void PgBudget::ReleaseLocked(int n) {
  held_ -= n;
  while (!waiters_.empty() && held_ < max_) {
    Waiter* first = waiters_.front();
    waiters_.erase(waiters_.begin());
    first->granted = true;
    held_ += 1;
  }
  cv_.notify_all();
}

PgPool::PgPool(std::string url, Duration timeout, int size, std::function<Status(PgConn&)> setup,
               std::shared_ptr<PgBudget> budget)
    : url_(std::move(url)),
      timeout_(timeout),
      setup_(std::move(setup)),
      budget_(std::move(budget)),
      state_(std::make_shared<State>(std::max(1, size))) {
  if (budget_ != nullptr) budget_->Register(state_);
}

PgPool::~PgPool() {
  std::vector<std::unique_ptr<PgConn>> idle;
  if (budget_ != nullptr) {
    std::lock_guard<std::mutex> lock(budget_->mu_);
    std::erase_if(budget_->pools_, [&](const std::weak_ptr<State>& p) {
      std::shared_ptr<State> s = p.lock();
      return s == nullptr || s == state_;
    });
    std::lock_guard<std::mutex> pool_lock(state_->mu);
    idle = std::move(state_->idle);
    state_->open -= static_cast<int>(idle.size());
    budget_->ReleaseLocked(static_cast<int>(idle.size()));
  } else {
    std::lock_guard<std::mutex> pool_lock(state_->mu);
    idle = std::move(state_->idle);
  }
  // The connections close here, outside every lock.
}

int PgPool::waiting() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return static_cast<int>(state_->queue.size());
}

PgPool::Handle::~Handle() {
  if (conn_ != nullptr) pool_->Return(std::move(conn_));
}

Result<std::unique_ptr<PgConn>> PgPool::Open() {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<PgConn> conn, PgConn::Connect(url_, timeout_));
  MEND_RETURN_IF_ERROR(setup_(*conn));
  return conn;
}

Result<PgPool::Handle> PgPool::Acquire() {
  const SteadyClock::time_point asked = SteadyClock::now();
  bool waited = false;
  {
    std::unique_lock<std::mutex> lock(state_->mu);
    const uint64_t ticket = state_->next_ticket++;
    state_->queue.push_back(ticket);
    const auto my_turn = [&] {
      return state_->queue.front() == ticket &&
             (!state_->idle.empty() || state_->open < state_->size);
    };
    if (!my_turn()) {
      waited = true;
      state_->cv.wait(lock, my_turn);
    }
    state_->queue.pop_front();
    state_->cv.notify_all();  // the next caller's turn
    if (!state_->idle.empty()) {
      std::unique_ptr<PgConn> conn = std::move(state_->idle.back());
      state_->idle.pop_back();
      CountAcquire(asked, waited);
      return Handle(this, std::move(conn));
    }
    state_->open += 1;
  }
  // A new connection of this pool: with a budget, one it allows (opened here) or one another
  // pool gave up (its session reset and set up for this one).
  std::unique_ptr<PgConn> given;
  if (budget_ != nullptr) {
    PgBudget::Grant grant = budget_->Take(state_.get());
    waited = waited || grant.waited;
    given = std::move(grant.conn);
    if (given != nullptr && grant.moved) {
      Status ready = given->ResetSession();
      if (ready.ok()) ready = setup_(*given);
      // A connection that cannot be set up is closed; its place is kept for a new one.
      if (!ready.ok()) given = nullptr;
    }
  }
  Result<std::unique_ptr<PgConn>> conn = given != nullptr ? std::move(given) : Open();
  if (!conn.ok()) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->open -= 1;
      state_->cv.notify_all();
    }
    if (budget_ != nullptr) budget_->Release();
    return conn.status();
  }
  CountAcquire(asked, waited);
  return Handle(this, std::move(conn).value());
}

void PgPool::Return(std::unique_ptr<PgConn> conn) {
  Activity().connections_in_use.fetch_sub(1, std::memory_order_relaxed);
  // A connection left inside a transaction (an error between BEGIN and COMMIT) is rolled back
  // before anyone else gets it; one that is lost is dropped and reopened on demand.
  if (conn->healthy() && !conn->idle()) conn->Run("ROLLBACK").IgnoreError();
  const bool reusable = conn->healthy() && conn->idle();
  if (reusable && budget_ != nullptr) {
    budget_->Return(state_, std::move(conn));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (reusable) {
      state_->idle.push_back(std::move(conn));
    } else {
      state_->open -= 1;
    }
    state_->cv.notify_all();
  }
  // Closed outside the lock; its place in the budget goes to the first waiter.
  if (conn != nullptr) {
    conn.reset();
    if (budget_ != nullptr) budget_->Release();
  }
}

}  // namespace mend::db
