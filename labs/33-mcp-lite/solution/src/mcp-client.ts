// McpClient: one long-lived stdio server, many concurrent JSON-RPC requests matched by
// id. This file wires framing, the pending table and the server process together and
// owns the lifecycle state machine: idle → starting → ready → closing → closed.
// (A server that dies or breaks protocol sends the client back to idle.)

import { boundedErrorData, describeReason, McpError, type McpErrorCode } from "./errors.ts";
import { encodeLine, LineDecoder, LineTooLongError } from "./framing.ts";
import {
  resolveCallTimeout,
  resolveOptions,
  SUPPORTED_PROTOCOL_VERSIONS,
  type McpClientOptions,
  type ResolvedOptions,
} from "./options.ts";
import { isNegotiated, UnsolicitedBudget } from "./notifications.ts";
import { PendingTable, type ExpireReason, type OpenOptions, type PendingRecord } from "./pending.ts";
import {
  checkInitializeResult,
  checkToolsResult,
  classifyLine,
  isPlainObject,
  isRequestId,
  type InitializeResult,
  type Tool,
} from "./protocol.ts";
import { buildServerEnv, EXIT_DRAIN_MS, ServerProcess, type ExitInfo } from "./server-process.ts";

export { McpError, type McpErrorCode } from "./errors.ts";
export * from "./options.ts";
export type { InitializeResult, Tool } from "./protocol.ts";

export interface CallOptions {
  signal?: AbortSignal;
  /** Deadline for this call in ms; positive integer. Default: the client's timeoutMs. */
  timeoutMs?: number;
}

export type ClientState = "idle" | "starting" | "ready" | "closing" | "closed";

/**
 * Optional observer of requests and server processes: the extension point a production
 * layer (packages/extensions) builds its trace and metrics on. It never sees tool
 * arguments, results or content, and whatever it throws is ignored.
 */
export interface ClientObserver {
  /** A request was registered (before its line is written); `settled` settles with it. */
  request?(event: { id: number; method: string; settled: Promise<unknown> }): void;
  /** A server process was started. */
  spawned?(event: { pid: number | undefined }): void;
  /** The server process is gone; `expected` when the client itself stopped it. */
  exited?(event: ExitInfo & { expected: boolean }): void;
}

/** Counters for observability. They never record arguments or results. */
export interface ClientMetrics {
  /** Requests in flight right now. */
  pending: number;
  /** Request lines waiting for the server's stdin to drain right now. */
  queuedWrites: number;
  requests: number;
  responses: number;
  remoteErrors: number;
  timeouts: number;
  aborts: number;
  busyRejections: number;
  unknownResponses: number;
  protocolFaults: number;
  notifications: number;
  ignoredNotifications: number;
  serverRequests: number;
  cancellationsSent: number;
  spawns: number;
  exits: number;
  stderrTruncated: boolean;
  lastExit: (ExitInfo & { expected: boolean }) | null;
}

/** Replies to server requests queued behind a full pipe at most; later ones are dropped. */
const MAX_QUEUED_REPLIES = 32;

/** JSON-RPC "method not found", returned for server requests the client does not serve. */
const METHOD_NOT_FOUND = -32601;

export class McpClient {
  private readonly options: ResolvedOptions;
  private readonly pending: PendingTable;
  private readonly observer: ClientObserver | undefined;
  private lifecycle: ClientState = "idle";
  private server: ServerProcess | undefined;
  private decoder: LineDecoder | undefined;
  private nextId = 1;
  private handshake: Promise<InitializeResult> | undefined;
  private initResult: InitializeResult | undefined;
  private failure: McpError | undefined;
  private stopping: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private writeErrorTimer: ReturnType<typeof setTimeout> | undefined;
  private budget: UnsolicitedBudget | undefined;
  private readonly counters: ClientMetrics = {
    pending: 0,
    queuedWrites: 0,
    requests: 0,
    responses: 0,
    remoteErrors: 0,
    timeouts: 0,
    aborts: 0,
    busyRejections: 0,
    unknownResponses: 0,
    protocolFaults: 0,
    notifications: 0,
    ignoredNotifications: 0,
    serverRequests: 0,
    cancellationsSent: 0,
    spawns: 0,
    exits: 0,
    stderrTruncated: false,
    lastExit: null,
  };
  private lastStderr: { text: string; truncated: boolean } = { text: "", truncated: false };

  // Validates options; spawns nothing. `observer` is for a production layer, not the lab.
  constructor(options: McpClientOptions, observer?: ClientObserver) {
    this.options = resolveOptions(options);
    this.observer = observer;
    this.pending = observer ? new ObservedPendingTable(observer) : new PendingTable();
  }

  /** Entries in the pending map right now. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** The running server's pid, if any. */
  get pid(): number | undefined {
    return this.server?.pid;
  }

  get initialized(): boolean {
    return this.lifecycle === "ready";
  }

  get state(): ClientState {
    return this.lifecycle;
  }

  /** What was kept of the current (or last) server's stderr. */
  get stderr(): { text: string; truncated: boolean } {
    if (!this.server) return { ...this.lastStderr };
    return { text: this.server.stderr.text, truncated: this.server.stderr.truncated };
  }

  get metrics(): ClientMetrics {
    const truncated = this.counters.stderrTruncated || (this.server?.stderr.truncated ?? false);
    return {
      ...this.counters,
      pending: this.pending.size,
      queuedWrites: this.queuedWrites,
      stderrTruncated: truncated,
      lastExit: this.counters.lastExit && { ...this.counters.lastExit },
    };
  }

  /** Request lines waiting for the server's stdin to drain (backpressure). */
  get queuedWrites(): number {
    return this.server?.queuedLines ?? 0;
  }

  // #region lesson:initialize
  // Starts the server if none is healthy, performs the handshake once, and shares one
  // in-flight handshake between concurrent callers.
  async initialize(): Promise<InitializeResult> {
    this.assertOpen("initialize");
    if (this.lifecycle === "ready" && this.initResult) return this.initResult;
    this.handshake ??= this.runHandshake().finally(() => {
      this.handshake = undefined;
    });
    return this.handshake;
  }
  // #endregion lesson:initialize

  async listTools(options: CallOptions = {}): Promise<Tool[]> {
    this.assertOpen("tools/list");
    const call = this.checkCallOptions(options);
    this.assertReady("tools/list", call.signal);
    const result = await this.request("tools/list", {}, call);
    const checked = checkToolsResult(result);
    if ("reason" in checked) {
      throw new McpError("MCP_PROTOCOL_ERROR", `invalid tools/list result: ${checked.reason}`, {
        method: "tools/list",
        phase: "request",
      });
    }
    return checked.tools;
  }

  // Resolves with the server's `result` exactly as sent.
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    this.assertOpen("tools/call");
    if (typeof name !== "string" || name.trim() === "") invalid("tool name must be a non-empty string");
    if (!isPlainObject(args)) invalid("tool arguments must be a plain object");
    const call = this.checkCallOptions(options);
    this.assertReady("tools/call", call.signal);
    return this.request("tools/call", { name, arguments: args }, call);
  }

  /** A liveness check with its own deadline, for health checks between calls. */
  async ping(options: CallOptions = {}): Promise<void> {
    this.assertOpen("ping");
    const call = this.checkCallOptions(options);
    this.assertReady("ping", call.signal);
    await this.request("ping", {}, call);
  }

  // #region lesson:close
  // Refuses new calls, rejects every pending request with CLIENT_CLOSED, then runs the
  // shutdown ladder and resolves once the server process is gone. Idempotent; every
  // caller waits for the same shutdown.
  close(): Promise<void> {
    this.closing ??= this.runClose();
    return this.closing;
  }

  private async runClose(): Promise<void> {
    this.lifecycle = "closing";
    this.initResult = undefined;
    this.pending.rejectAll((record) =>
      contextual("CLIENT_CLOSED", "the client was closed", record, { phase: "close" }),
    );
    this.clearWriteErrorTimer();
    const server = this.server;
    if (server) await server.stop(this.options.closeTimeoutMs);
    if (this.stopping) await this.stopping;
    this.lifecycle = "closed";
  }
  // #endregion lesson:close

  private async runHandshake(): Promise<InitializeResult> {
    if (this.stopping) await this.stopping; // the previous server is still shutting down
    this.assertOpen("initialize");
    this.lifecycle = "starting";
    const server = this.spawnServer();
    try {
      await server.start();
    } catch (cause) {
      if (this.server === server) this.forgetServer();
      if (this.lifecycle === "starting") this.lifecycle = "idle";
      const code = (cause as NodeJS.ErrnoException).code ?? "unknown";
      throw new McpError("MCP_SPAWN_FAILED", `could not start ${JSON.stringify(this.options.executable)}: ${code}`, {
        cause,
        phase: "spawn",
      });
    }
    observe(this.observer, "spawned", { pid: server.pid });
    this.assertOpen("initialize");

    try {
      const result = await this.request(
        "initialize",
        {
          protocolVersion: SUPPORTED_PROTOCOL_VERSIONS[0],
          capabilities: {},
          clientInfo: this.options.clientInfo,
        },
        { timeoutMs: this.options.timeoutMs },
      );
      const reason = checkInitializeResult(result);
      if (reason) throw new McpError("MCP_PROTOCOL_ERROR", `handshake failed: ${reason}`, { phase: "handshake" });
      const init = result as InitializeResult;
      if (!SUPPORTED_PROTOCOL_VERSIONS.includes(init.protocolVersion)) {
        throw new McpError(
          "MCP_PROTOCOL_ERROR",
          `handshake failed: server offered protocol version ${JSON.stringify(init.protocolVersion)}; ` +
            `this client supports ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
          { phase: "handshake" },
        );
      }
      this.assertOpen("initialize");
      if (this.server !== server || server.send(encodeLine({ jsonrpc: "2.0", method: "notifications/initialized" })) === "dropped") {
        throw this.failure ?? new McpError("MCP_PROCESS_EXIT", "handshake failed: the server went away", { phase: "handshake" });
      }
      this.initResult = init;
      this.lifecycle = "ready";
      return init;
    } catch (error) {
      // A failed handshake stops the child it started; initialized stays false.
      if (this.lifecycle === "starting" && this.server === server) {
        this.lifecycle = "idle";
        // The handshake's failure is why this server stops: its exit is expected, not a
        // second failure.
        if (error instanceof McpError) this.failure ??= error;
        this.stopServer(server);
      }
      // Whoever started the stop (this catch, a protocol fault, an exit), the caller
      // hears of the failure only once the child is gone. close() does its own waiting.
      // (Read through a widened type: the awaits above let close() change the state.)
      const state: ClientState = this.lifecycle as ClientState;
      if (state !== "closing" && state !== "closed") await this.stopping;
      throw error;
    }
  }

  private spawnServer(): ServerProcess {
    const decoder = new LineDecoder(this.options.maxLineBytes);
    const server: ServerProcess = new ServerProcess({
      executable: this.options.executable,
      args: this.options.args,
      cwd: this.options.cwd,
      env: buildServerEnv(this.options.env),
      maxStderrBytes: this.options.maxStderrBytes,
      onStdout: (chunk) => this.onStdout(server, chunk),
      onWriteError: (error) => this.onWriteError(server, error),
      onExit: (info) => {
        const current = server === this.server;
        this.onExit(server, info);
        if (current) observe(this.observer, "exited", { ...info, expected: this.counters.lastExit?.expected ?? false });
      },
    });
    this.server = server;
    this.decoder = decoder;
    this.failure = undefined;
    this.budget = new UnsolicitedBudget(this.options.maxNotificationsPerSecond, this.options.maxNotificationBytesPerSecond);
    this.counters.spawns += 1;
    return server;
  }

  // #region lesson:request
  // The order matters: validate and serialize, check for a pre-aborted signal and the
  // in-flight cap, take an id, register the record (timer, listener, map entry), and
  // only then write, so even an instant answer finds its entry.
  private request(method: string, params: Record<string, unknown>, call: CallOptions): Promise<unknown> {
    const paramsJson = serialize(params);
    const { signal } = call;
    if (signal?.aborted) throw abortedBeforeStart(method, signal.reason);
    if (this.pending.size >= this.options.maxPending) {
      this.counters.busyRejections += 1;
      throw new McpError("MCP_BUSY", `${this.options.maxPending} requests already in flight (maxPending)`, {
        method,
        phase: "request",
      });
    }
    const methodJson = JSON.stringify(method);
    const bytes = Buffer.byteLength(paramsJson) + methodJson.length + 64;
    if (bytes > this.options.maxRequestBytes) {
      invalid(`${method} request is about ${bytes} bytes, over maxRequestBytes (${this.options.maxRequestBytes})`);
    }
    if (this.nextId > Number.MAX_SAFE_INTEGER) invalid("request ids exhausted; start a new client");
    const server = this.server;
    if (!server) throw this.notReady(method);

    const id = this.nextId++;
    const timeoutMs = call.timeoutMs ?? this.options.timeoutMs;
    const promise = this.pending.open(id, method, {
      timeoutMs,
      signal,
      expireError: (record, reason, abortReason) => this.expireError(record, reason, timeoutMs, abortReason),
      onExpire: (record, reason) => this.onExpire(server, record, reason),
    });
    this.counters.requests += 1;
    const line = `{"jsonrpc":"2.0","id":${id},"method":${methodJson},"params":${paramsJson}}\n`;
    const sent = server.send(
      line,
      () => this.markWritten(id),
      () => this.pending.has(id),
    );
    const record = this.pending.get(id);
    if (sent === "dropped" && record) {
      // The pipe already failed but the failure is not decided yet (see onWriteError):
      // say what happened rather than "not initialized".
      const error =
        this.failure ?? contextual("MCP_PROTOCOL_ERROR", "the server's stdin is closed; the request was not sent", record, { phase: "transport" });
      this.pending.settle(id, { ok: false, error });
    }
    return promise;
  }
  // #endregion lesson:request

  private markWritten(id: number): boolean {
    const record = this.pending.get(id);
    if (record) record.written = true;
    return record !== undefined;
  }

  private expireError(record: PendingRecord, reason: ExpireReason, timeoutMs: number, abortReason: unknown): McpError {
    if (reason === "timeout") {
      this.counters.timeouts += 1;
      return contextual("MCP_TIMEOUT", `timed out after ${timeoutMs} ms`, record, { timeoutMs, phase: "request" });
    }
    this.counters.aborts += 1;
    return contextual("MCP_ABORTED", `aborted: ${describeReason(abortReason)}`, record, {
      cause: abortReason,
      phase: "request",
    });
  }

  // Best effort: tell the server it may stop working on a request the caller gave up on.
  // Local cleanup already happened; a late answer will find no entry and be ignored.
  private onExpire(server: ServerProcess, record: PendingRecord, reason: ExpireReason): void {
    // Never written: it leaves the send queue now and the server never hears of it.
    if (!record.written) server.discardUnwanted();
    if (!record.written || record.method === "initialize" || server !== this.server) return;
    const notice = encodeLine({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: record.id, reason: reason === "timeout" ? "timeout" : "aborted by the caller" },
    });
    if (server.sendIfIdle(notice)) this.counters.cancellationsSent += 1;
  }

  private onStdout(server: ServerProcess, chunk: Buffer): void {
    if (server !== this.server || !this.decoder) return;
    let lines: string[];
    try {
      lines = this.decoder.push(chunk);
    } catch (error) {
      if (error instanceof LineTooLongError) this.protocolFault(server, error.message, error);
      else throw error;
      return;
    }
    for (const line of lines) {
      this.handleLine(server, line);
      if (this.failure || server !== this.server) return;
    }
  }

  private handleLine(server: ServerProcess, line: string): void {
    const message = classifyLine(line);
    if (message.kind === "request" || message.kind === "notification") {
      // Unsolicited traffic has a budget per second; a server over it is flooding.
      const overBudget = this.budget?.admit(Buffer.byteLength(line));
      if (overBudget) {
        this.protocolFault(server, overBudget);
        return;
      }
    }
    switch (message.kind) {
      case "invalid":
        this.protocolFault(server, message.reason);
        return;
      case "response":
        if (isRequestId(message.id) && this.pending.settle(message.id, { ok: true, value: message.result })) {
          this.counters.responses += 1;
        } else {
          this.counters.unknownResponses += 1; // late, duplicate, or never ours: never matched
        }
        return;
      case "error-response": {
        const record = isRequestId(message.id) ? this.pending.get(message.id) : undefined;
        if (!record) {
          this.counters.unknownResponses += 1;
          return;
        }
        const { code, message: text, data } = message.error;
        this.counters.remoteErrors += 1;
        this.pending.settle(record.id, {
          ok: false,
          error: contextual("MCP_ERROR", `server error ${code}: ${text}`, record, {
            remoteCode: code,
            data: boundedErrorData(data),
            phase: "request",
          }),
        });
        return;
      }
      case "request":
        this.counters.serverRequests += 1;
        // A server that keeps asking while it does not read our answers must not grow
        // the send queue: past a few queued replies, later ones are dropped.
        if (server.queuedLines >= MAX_QUEUED_REPLIES) return;
        server.send(
          encodeLine(
            message.method === "ping"
              ? { jsonrpc: "2.0", id: message.id, result: {} }
              : { jsonrpc: "2.0", id: message.id, error: { code: METHOD_NOT_FOUND, message: `Method not found: ${message.method}` } },
          ),
        );
        return;
      case "notification":
        this.onNotification(server, message.method, message.params);
        return;
    }
  }

  // Notifications never settle a request. Only what was negotiated (notifications.ts)
  // reaches onNotification; the rest is counted.
  private onNotification(_server: ServerProcess, method: string, params: unknown): void {
    if (!isNegotiated(method, params, this.initResult?.capabilities, (id) => this.pending.has(id))) {
      this.counters.ignoredNotifications += 1;
      return;
    }
    this.counters.notifications += 1;
    try {
      this.options.onNotification?.({ method, params });
    } catch {
      // A throwing listener must not break the protocol loop.
    }
  }

  private protocolFault(server: ServerProcess, reason: string, cause?: unknown): void {
    if (server !== this.server || this.failure) return;
    this.counters.protocolFaults += 1;
    this.fail(server, new McpError("MCP_PROTOCOL_ERROR", `server broke the protocol: ${reason}`, { cause, phase: "transport" }));
  }

  // The server stopped reading stdin. Usually it is dying: give its exit a moment to be
  // observed so callers see the true cause (exit code, stderr), else call it a fault.
  private onWriteError(server: ServerProcess, error: Error): void {
    if (server !== this.server || this.failure || this.writeErrorTimer) return;
    this.writeErrorTimer = setTimeout(() => {
      this.writeErrorTimer = undefined;
      if (server !== this.server || this.failure || server.hasExited) return;
      this.fail(
        server,
        new McpError("MCP_PROTOCOL_ERROR", `server stopped reading its stdin: ${(error as NodeJS.ErrnoException).code ?? error.message}`, {
          cause: error,
          phase: "transport",
        }),
      );
    }, EXIT_DRAIN_MS);
  }

  // #region lesson:on-exit
  private onExit(server: ServerProcess, info: ExitInfo): void {
    if (server !== this.server) return;
    const expected = this.lifecycle === "closing" || this.failure !== undefined;
    this.counters.exits += 1;
    this.counters.lastExit = { ...info, expected };
    this.clearWriteErrorTimer();
    const stderr = { text: server.stderr.text, truncated: server.stderr.truncated };
    if (!this.failure && this.lifecycle !== "closing" && this.lifecycle !== "closed") {
      const how = info.signal ? `signal ${info.signal}` : `code ${info.exitCode}`;
      this.failure = new McpError("MCP_PROCESS_EXIT", `server exited (${how})`, {
        exitCode: info.exitCode,
        signal: info.signal,
        stderr: stderr.text,
        stderrTruncated: stderr.truncated,
        phase: "transport",
      });
      const failure = this.failure;
      this.pending.rejectAll((record) =>
        contextual("MCP_PROCESS_EXIT", failure.message, record, {
          exitCode: info.exitCode,
          signal: info.signal,
          stderr: stderr.text,
          stderrTruncated: stderr.truncated,
          phase: "transport",
        }),
      );
    }
    this.lastStderr = stderr;
    this.counters.stderrTruncated ||= stderr.truncated;
    this.forgetServer();
    if (this.lifecycle === "ready" || this.lifecycle === "starting") this.lifecycle = "idle";
    this.initResult = undefined;
  }
  // #endregion lesson:on-exit

  // First termination reason wins: reject everything pending with it, go back to idle,
  // and stop the server. Pending requests are never replayed.
  private fail(server: ServerProcess, error: McpError): void {
    this.failure = error;
    this.decoder?.fail();
    server.stopReading();
    this.pending.rejectAll((record) =>
      contextual(error.code, error.message, record, { cause: error.cause, phase: error.phase }),
    );
    if (this.lifecycle === "ready" || this.lifecycle === "starting") this.lifecycle = "idle";
    this.initResult = undefined;
    this.stopServer(server);
  }

  private stopServer(server: ServerProcess): void {
    const stopping = server.stop(this.options.closeTimeoutMs).finally(() => {
      if (this.stopping === stopping) this.stopping = undefined;
    });
    this.stopping = stopping;
  }

  private forgetServer(): void {
    this.server = undefined;
    this.decoder = undefined;
  }

  private clearWriteErrorTimer(): void {
    if (this.writeErrorTimer !== undefined) clearTimeout(this.writeErrorTimer);
    this.writeErrorTimer = undefined;
  }

  private assertOpen(method: string): void {
    if (this.lifecycle === "closing" || this.lifecycle === "closed") {
      throw new McpError("CLIENT_CLOSED", `${method}: the client was closed`, { method, phase: "close" });
    }
  }

  private assertReady(method: string, signal: AbortSignal | undefined): void {
    if (signal?.aborted) throw abortedBeforeStart(method, signal.reason);
    if (this.lifecycle !== "ready") throw this.notReady(method);
  }

  private notReady(method: string): McpError {
    return new McpError("MCP_NOT_INITIALIZED", `${method}: call initialize() first (no initialized server)`, {
      method,
      phase: "request",
    });
  }

  private checkCallOptions(options: CallOptions): CallOptions {
    if (options === null || typeof options !== "object") invalid("call options must be an object");
    const { signal } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal)) invalid("signal must be an AbortSignal");
    return { signal, timeoutMs: resolveCallTimeout(options.timeoutMs, this.options.timeoutMs) };
  }
}

// Calls one observer hook; whatever it throws stays with the observer.
function observe<K extends keyof ClientObserver>(
  observer: ClientObserver | undefined,
  hook: K,
  event: Parameters<NonNullable<ClientObserver[K]>>[0],
): void {
  try {
    (observer?.[hook] as ((event: unknown) => void) | undefined)?.call(observer, event);
  } catch {
    // An observer is diagnostics; it must not change the protocol's outcome.
  }
}

// The request table, telling the observer about every request it registers.
class ObservedPendingTable extends PendingTable {
  private readonly observer: ClientObserver;

  constructor(observer: ClientObserver) {
    super();
    this.observer = observer;
  }

  override open(id: number, method: string, options: OpenOptions): Promise<unknown> {
    const settled = super.open(id, method, options);
    observe(this.observer, "request", { id, method, settled });
    return settled;
  }
}

// Builds a per-request error that names the request it ended. Unless the server answered
// (MCP_ERROR), it also says whether the server ever received the request: a written request
// that ended without an answer may have run ("unknown"), and is never replayed.
function contextual(
  code: McpErrorCode,
  message: string,
  record: PendingRecord,
  details: ConstructorParameters<typeof McpError>[2] = {},
): McpError {
  return new McpError(code, `${record.method} (id ${record.id}): ${message}`, {
    ...details,
    method: record.method,
    requestId: record.id,
    outcome: code === "MCP_ERROR" ? undefined : record.written ? "unknown" : "not-sent",
  });
}

function abortedBeforeStart(method: string, reason: unknown): McpError {
  return new McpError("MCP_ABORTED", `${method}: aborted before it was sent: ${describeReason(reason)}`, {
    method,
    cause: reason,
    phase: "request",
  });
}

// Serializes params before any id or record exists, so a circular or BigInt argument
// fails with MCP_INVALID_ARGUMENT and leaves nothing behind.
function serialize(params: Record<string, unknown>): string {
  try {
    return JSON.stringify(params);
  } catch (cause) {
    throw new McpError("MCP_INVALID_ARGUMENT", `arguments are not JSON-serializable: ${(cause as Error).message}`, {
      cause,
      phase: "request",
    });
  }
}

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "request" });
}
