#pragma once

// The whole public C++ API of mend in one include: every public header, grouped by module in the
// order of docs/architecture.md (each module only builds on those above it). A program that
// embeds mend starts at app/runtime.h (OpenRuntime, OpenAgent) and agent/agent.h; docs/api.md says
// how to build the reference and lists what each header is for. Including a module's headers one
// by one works as well: every public header compiles on its own.

// base: Status and Result, the Env seams (file system, clock, randomness) and their fakes,
// hashing, JSON, UTF-8 and time helpers, subprocesses, the configuration and the home layout.
#include "mend/base/base64.h"
#include "mend/base/clock.h"
#include "mend/base/config.h"
#include "mend/base/edit_distance.h"
#include "mend/base/env.h"
#include "mend/base/fault_injection_file_system.h"
#include "mend/base/file_system.h"
#include "mend/base/hash.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/pattern.h"
#include "mend/base/random.h"
#include "mend/base/result.h"
#include "mend/base/retry_after.h"
#include "mend/base/sha256_hasher.h"
#include "mend/base/status.h"
#include "mend/base/subprocess.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"

// db: the SQLite connection and the PostgreSQL helpers the stores are built on.
#include "mend/db/pg_conn.h"
#include "mend/db/schema_read.h"
#include "mend/db/sqlite.h"
#include "mend/db/sqlite_backup.h"

// net: the HTTP server of `mend serve` and `mend proxy`, with its connection limits.
#include "mend/net/http_server.h"

// llm: LlmProvider and its implementations, requests and completions, prices, embedders.
#include "mend/llm/embedder.h"
#include "mend/llm/factory.h"
#include "mend/llm/models_probe.h"
#include "mend/llm/outage_breaker.h"
#include "mend/llm/prices.h"
#include "mend/llm/provider.h"
#include "mend/llm/recording_provider.h"
#include "mend/llm/scripted_provider.h"
#include "mend/llm/types.h"

// store: CheckpointStore (SQLite, PostgreSQL): runs, checkpoints, leases, pages, pruning.
#include "mend/store/checkpoint_store.h"
#include "mend/store/lease_state.h"
#include "mend/store/postgres_store.h"
#include "mend/store/prune.h"
#include "mend/store/recovery_page.h"
#include "mend/store/run_page.h"
#include "mend/store/run_record.h"
#include "mend/store/schema_version.h"
#include "mend/store/sqlite_store.h"
#include "mend/store/sqlite_vfs.h"

// obs: events, metrics, tracing, observe.db and OTLP.
#include "mend/obs/events.h"
#include "mend/obs/metrics.h"
#include "mend/obs/otlp.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/otlp_encode.h"
#include "mend/obs/otlp_transport.h"
#include "mend/obs/span_store.h"
#include "mend/obs/span_writer.h"
#include "mend/obs/trace.h"

// mcp: the Model Context Protocol: JSON-RPC framing, transports, the client and the server side.
#include "mend/mcp/client.h"
#include "mend/mcp/jsonrpc.h"
#include "mend/mcp/server.h"
#include "mend/mcp/transport.h"

// agent: agent folders, tools, hooks and the durable step loop (Agent).
#include "mend/agent/agent.h"
#include "mend/agent/agent_spec.h"
#include "mend/agent/builtin_tools.h"
#include "mend/agent/command_vars.h"
#include "mend/agent/hooks.h"
#include "mend/agent/json_schema.h"
#include "mend/agent/run_origin.h"
#include "mend/agent/run_view.h"
#include "mend/agent/tool.h"
#include "mend/agent/tool_registry.h"

// memory: long-term memory: facts, their stores and the retriever.
#include "mend/memory/backfill.h"
#include "mend/memory/chatcli_format.h"
#include "mend/memory/fact.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/lexical.h"
#include "mend/memory/postgres_fact_store.h"
#include "mend/memory/retriever.h"
#include "mend/memory/schema_version.h"

// lessonq: the durable lesson queue (WAL directory or PostgreSQL).
#include "mend/lessonq/durable_queue.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/lessonq/wal_codec.h"
#include "mend/lessonq/wal_dir.h"

// reflexion: lessons from failures, and the verify, refine and reflexion hooks.
#include "mend/reflexion/generator.h"
#include "mend/reflexion/hooks.h"
#include "mend/reflexion/lesson.h"
#include "mend/reflexion/lesson_sink.h"

// heal: the recovery loop, the progress guard, output checks and shadow mode.
#include "mend/heal/agent_checks.h"
#include "mend/heal/output_check.h"
#include "mend/heal/progress_guard.h"
#include "mend/heal/provider_endpoint.h"
#include "mend/heal/recovery.h"
#include "mend/heal/shadow_hook.h"

// improve: cases, evaluation, gates, the audit folder and proposals.
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/canary.h"
#include "mend/improve/canary_store.h"
#include "mend/improve/card.h"
#include "mend/improve/cases.h"
#include "mend/improve/editor_protocol.h"
#include "mend/improve/evaluate.h"
#include "mend/improve/failures.h"
#include "mend/improve/gates.h"
#include "mend/improve/improve.h"
#include "mend/improve/proposal.h"
#include "mend/improve/proposal_diff.h"
#include "mend/improve/split.h"

// proxy: `mend proxy`, the memory- and lesson-adding proxy in front of a model API.
#include "mend/proxy/proxy.h"
#include "mend/proxy/schema_version.h"

// app: the wiring: Runtime and OpenAgent, recovery, the daemon, lessons, improve, migrations.
#include "mend/app/backup.h"
#include "mend/app/canary.h"
#include "mend/app/check_hooks.h"
#include "mend/app/daemon.h"
#include "mend/app/improve_attempt.h"
#include "mend/app/improve_view.h"
#include "mend/app/lesson_admin.h"
#include "mend/app/lessons.h"
#include "mend/app/mcp_serve.h"
#include "mend/app/mcp_tools.h"
#include "mend/app/memory_hooks.h"
#include "mend/app/memory_view.h"
#include "mend/app/migrate.h"
#include "mend/app/proxy.h"
#include "mend/app/recovery.h"
#include "mend/app/retention.h"
#include "mend/app/run_inspector.h"
#include "mend/app/run_json.h"
#include "mend/app/run_model.h"
#include "mend/app/run_progress.h"
#include "mend/app/runtime.h"
#include "mend/app/runtime_metrics.h"

// server: `mend serve`'s HTTP server and MCP over HTTP.
#include "mend/server/mcp_http.h"
#include "mend/server/server.h"

/// \namespace mend
/// mend's C++ API. The base module's types (Status, Result, Env, FileSystem, Clock, ...) live in
/// this namespace itself; every other module has a namespace of its own inside it.

/// \namespace mend::home
/// The paths under mend's home directory (base/home_layout.h, docs/home.md).

/// \namespace mend::db
/// The database layer below the stores: SQLite and PostgreSQL connections (db/*.h).

/// \namespace mend::llm
/// Chat models and embedders: LlmProvider and its implementations (llm/*.h,
/// docs/llm_providers.md).

/// \namespace mend::store
/// The checkpoint store of runs (store/*.h, docs/runs.md, docs/store_schema.md).

/// \namespace mend::obs
/// Observability: events, metrics, traces, observe.db and OTLP (obs/*.h, docs/observe.md).

/// \namespace mend::mcp
/// The Model Context Protocol, client and server (mcp/*.h, docs/mcp.md).

/// \namespace mend::agent
/// Agent folders, tools, hooks and the durable agent loop (agent/*.h, docs/runs.md).

/// \namespace mend::memory
/// Long-term memory (memory/*.h, docs/memory.md).

/// \namespace mend::lessonq
/// The durable lesson queue (lessonq/*.h, docs/lesson_queue.md).

/// \namespace mend::reflexion
/// Lessons from failures and the post-run quality hooks (reflexion/*.h, docs/reflexion.md).

/// \namespace mend::heal
/// Recovery and the hooks that keep a run on track (heal/*.h, docs/heal.md).

/// \namespace mend::improve
/// Improving an agent folder from cases and failures (improve/*.h, docs/improve.md).

/// \namespace mend::proxy
/// `mend proxy` (proxy/*.h, docs/proxy.md).

/// \namespace mend::app
/// The wiring of all modules from the configuration: Runtime, OpenAgent and what the commands
/// share (app/*.h).

/// \namespace mend::server
/// `mend serve`'s HTTP server (server/*.h, docs/serve.md).
