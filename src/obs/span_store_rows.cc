#include "obs/span_store_rows.h"

#include "obs/span_codec.h"
#include "obs/span_store_sql.h"

namespace mend::obs::internal {

void BindSpan(SqliteStmt& stmt, const SpanData& span, SpanRowText& text) {
  EncodeAttributesTo(span.attributes, text.attributes);
  EncodeEventsTo(span.events, text.events);
  EncodeLinksTo(span.links, text.links);
  stmt.BindTextRef(1, span.context.trace_id)
      .BindTextRef(2, span.context.span_id)
      .BindTextRef(3, span.parent_span_id)
      .Bind(4, span.context.flags)
      .BindTextRef(5, span.run_id)
      .BindTextRef(6, span.name)
      .Bind(7, static_cast<int64_t>(span.kind))
      .Bind(8, UnixNanos(span.start))
      .Bind(9, UnixNanos(span.end))
      .Bind(10, static_cast<int64_t>(span.status))
      .BindTextRef(11, span.status_message)
      .BindTextRef(12, text.attributes)
      .BindTextRef(13, text.events)
      .BindTextRef(14, text.links);
}

Result<SpanData> SpanOfRow(const SqliteStmt& stmt) {
  SpanData span;
  span.context.trace_id = stmt.Text(0);
  span.context.span_id = stmt.Text(1);
  span.parent_span_id = stmt.Text(2);
  span.context.flags = static_cast<uint8_t>(stmt.Int(3));
  span.run_id = stmt.Text(4);
  span.name = stmt.Text(5);
  const int64_t kind = stmt.Int(6);
  const int64_t status = stmt.Int(9);
  if (kind < 1 || kind > 5 || status < 0 || status > 2) {
    return DataLossError("observe.db: span " + span.context.span_id + " has a bad kind or status");
  }
  span.kind = static_cast<SpanKind>(kind);
  span.start = FromUnixNanos(stmt.Int(7));
  span.end = FromUnixNanos(stmt.Int(8));
  span.status = static_cast<SpanStatus>(status);
  span.status_message = stmt.Text(10);
  MEND_ASSIGN_OR_RETURN(span.attributes, DecodeAttributes(stmt.Text(11)));
  MEND_ASSIGN_OR_RETURN(span.events, DecodeEvents(stmt.Text(12)));
  MEND_ASSIGN_OR_RETURN(span.links, DecodeLinks(stmt.Text(13)));
  return span;
}

void BindRun(SqliteStmt& stmt, const RunAccumulator& acc) {
  const RunTraceSummary& s = acc.summary;
  stmt.BindText(1, s.run_id)
      .BindText(2, s.trace_id)
      .Bind(3, acc.trace_rank)
      .BindText(4, s.agent)
      .BindText(5, s.status)
      .Bind(6, acc.status_end_ns)
      .Bind(7, UnixNanos(s.start))
      .Bind(8, UnixNanos(s.end))
      .Bind(9, s.attempts)
      .Bind(10, s.model_turns)
      .Bind(11, s.tool_calls)
      .Bind(12, s.tool_errors)
      .Bind(13, s.heal_actions)
      .BindDouble(14, s.cost_usd)
      .Bind(15, s.input_tokens)
      .Bind(16, s.output_tokens);
}

RunTraceSummary RunOfRow(const SqliteStmt& stmt) {
  RunTraceSummary s;
  s.run_id = stmt.Text(0);
  s.trace_id = stmt.Text(1);
  s.agent = stmt.Text(3);
  s.status = stmt.Text(4);
  s.start = FromUnixNanos(stmt.Int(6));
  s.end = FromUnixNanos(stmt.Int(7));
  s.attempts = stmt.Int(8);
  s.model_turns = stmt.Int(9);
  s.tool_calls = stmt.Int(10);
  s.tool_errors = stmt.Int(11);
  s.heal_actions = stmt.Int(12);
  s.cost_usd = stmt.Double(13);
  s.input_tokens = stmt.Int(14);
  s.output_tokens = stmt.Int(15);
  return s;
}

Status RecomputeRun(SqliteConn& conn, const std::string& run_id) {
  RunAccumulator acc;
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt select, conn.Prepare(kSpansOfRun));
    select.BindText(1, run_id);
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      MEND_ASSIGN_OR_RETURN(SpanData span, SpanOfRow(select));
      acc.Add(span);
    }
  }
  MEND_ASSIGN_OR_RETURN(SqliteStmt erase, conn.Prepare(kDeleteRun));
  MEND_RETURN_IF_ERROR(erase.BindText(1, run_id).Run());
  if (acc.empty) return OkStatus();
  MEND_ASSIGN_OR_RETURN(SqliteStmt upsert, conn.Prepare(kUpsertRun));
  BindRun(upsert, acc);
  return upsert.Run();
}

}  // namespace mend::obs::internal
