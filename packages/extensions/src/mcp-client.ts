// @coding-agent/extensions: the production McpClient. It IS the lab's reference client
// (labs/33-mcp-lite/solution, one copy of the protocol code) with the layer a long-lived
// coding agent needs on top: trace events and latency metrics through the reference
// client's observer hook, secret redaction of every text it emits, fault reports on every
// error, stop reasons, and byte budgets drawn from the caller's budget.

import { basename } from "node:path";
import { performance } from "node:perf_hooks";
import { McpError as BaseMcpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import {
  McpClient as BaseMcpClient,
  type CallOptions as BaseCallOptions,
  type ClientMetrics,
  type InitializeResult,
  type McpClientOptions as BaseMcpClientOptions,
  type Tool,
} from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { decodeWholeCharacters } from "../../../labs/33-mcp-lite/solution/src/stderr-tail.ts";
import { budgetProblem, jsonBytes, type McpBudget } from "./budget.ts";
import { prepare } from "./client-options.ts";
import { defineAsyncDispose } from "./dispose.ts";
import { McpError, stopReasonOfError, type FaultContext, type McpStopReason } from "./errors.ts";
import type { Redactor } from "./redact.ts";
import { serverHash } from "./server-hash.ts";
import { spawnMessage } from "./spawn-cwd.ts";
import { Telemetry, type LatencySummary, type McpTraceEvent } from "./telemetry.ts";

export { McpCancel, McpError, stopReasonOf, type McpErrorCode, type McpFaultReport, type McpStopReason, type McpAvailability } from "./errors.ts";
export type { McpBudget } from "./budget.ts";
export { REDACTED } from "./redact.ts";
export { CLIENT_INFO, defaultCwd } from "./defaults.ts";
export type { LatencySummary, McpTraceEvent } from "./telemetry.ts";
export type { InitializeResult, Tool } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";

/** Bytes of the (redacted) stderr tail a fault report keeps. */
export const REPORT_STDERR_BYTES = 4 * 1024;

export interface McpClientOptions extends BaseMcpClientOptions {
  /** Working directory of the server. Default: a private, empty directory (mode 0700, made
   *  once per process by defaultCwd(), removed at exit if still empty), never the agent's
   *  own working directory. */
  cwd?: string;
  /** Values that never leave the client in clear (stderr tail, error messages, trace, fault
   *  reports); each a non-empty string. Give them to the server through `env`; a secret in
   *  `args` is refused with MCP_INVALID_ARGUMENT. Default: none. */
  secrets?: readonly string[];
  /** Identifies this run in every trace event and fault report. Default: a random id. */
  runId?: string;
  /** Receives one event per settled request and one per server lifecycle step; never
   *  arguments, results or content. Default: none. */
  onTrace?: (event: McpTraceEvent) => void;
  /** Budget every call draws from unless the call brings its own. Default: none (no cap). */
  budget?: McpBudget;
  /** Redact the secrets in tool results too (tool metadata, notifications, error data and
   *  stderr always are). Off by default: a result is the tool's answer, and rewriting it can
   *  change what the agent reads. Default: false. */
  redactResults?: boolean;
}

export interface CallOptions extends BaseCallOptions {
  /** Bytes this call may spend; decremented in place. Default: the client's budget. */
  budget?: McpBudget;
}

export interface ProductionMetrics extends ClientMetrics {
  runId: string;
  /** The running server's instance id, if one runs. */
  serverInstanceId: string | null;
  /** Servers running right now (0 or 1 for one client). */
  activeServers: number;
  /** Latency per method over its most recent requests, in ms. */
  latencyMs: Record<string, LatencySummary>;
  /** Server exits by kind ("expected signal SIGTERM", "unexpected code 3", ...). */
  exitReasons: Record<string, number>;
  /** Calls stopped, by reason. */
  stops: Record<McpStopReason, number>;
}

export class McpClient extends BaseMcpClient {
  readonly runId: string;
  private readonly telemetry: Telemetry;
  private readonly redactor: Redactor;
  private readonly identity: { executable: string; args: string[]; cwd?: string; env: Record<string, string>; secrets: string[] };
  private readonly defaultBudget: McpBudget | undefined;
  private readonly redactResults: boolean;
  /** The working directory the server is started in (the configured one or the default). */
  private readonly cwd: string | undefined;
  private readonly stopCounts: Record<McpStopReason, number>;
  private hash: string | undefined;

  // Validates the options (the reference client's and this layer's); spawns nothing.
  constructor(options: McpClientOptions) {
    const prepared = prepare(options);
    super(prepared.base, prepared.telemetry);
    this.runId = prepared.runId;
    this.telemetry = prepared.telemetry;
    this.redactor = prepared.redactor;
    this.identity = prepared.identity;
    this.defaultBudget = options.budget;
    this.redactResults = options.redactResults === true;
    this.cwd = prepared.base.cwd;
    this.stopCounts = { user: 0, budget: 0, shutdown: 0, process: 0 };
  }

  /** sha256 of the normalized configuration and the executable's (and script's) content. */
  get serverHash(): string {
    this.hash ??= serverHash(this.identity);
    return this.hash;
  }

  /** The redacted tail of the current (or last) server's stderr. */
  override get stderr(): { text: string; truncated: boolean } {
    const raw = super.stderr;
    return { text: this.redactTail(raw.text, raw.truncated), truncated: raw.truncated };
  }

  override get metrics(): ProductionMetrics {
    return {
      ...super.metrics,
      runId: this.runId,
      serverInstanceId: this.pid === undefined ? null : (this.telemetry.current?.id ?? null),
      activeServers: this.pid === undefined ? 0 : 1,
      latencyMs: this.telemetry.latencySummary(),
      exitReasons: this.telemetry.exitReasonCounts(),
      stops: { ...this.stopCounts },
    };
  }

  override async initialize(): Promise<InitializeResult> {
    const started = performance.now();
    try {
      const result = await super.initialize();
      this.telemetry.initialized(result);
      return result;
    } catch (error) {
      throw this.translate(error, started);
    }
  }

  override async listTools(options: CallOptions = {}): Promise<Tool[]> {
    const started = performance.now();
    const budget = this.budgetFor(options, "tools/list");
    const reserved = budget ? this.reserve(budget, "tools/list", 64) : 0;
    let tools: Tool[];
    try {
      tools = await super.listTools(baseCall(options));
    } catch (error) {
      throw this.refundAndTranslate(error, budget, reserved, started);
    }
    if (budget) this.charge(budget, "tools/list", tools);
    // Tool metadata is server text the agent (and its model) reads: never a secret in clear.
    return this.redactor.redactValue(tools) as Tool[];
  }

  override async callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    const started = performance.now();
    const budget = this.budgetFor(options, "tools/call");
    const size = budget ? jsonBytes({ name, arguments: args }) : undefined;
    const reserved = budget && size !== undefined ? this.reserve(budget, "tools/call", size) : 0;
    let result: unknown;
    try {
      // The reference client registers the request synchronously inside this call, so the
      // trace learns the tool's name without the hook ever seeing the arguments.
      this.telemetry.toolHint = typeof name === "string" ? name : undefined;
      let call: Promise<unknown>;
      try {
        call = super.callTool(name, args, baseCall(options));
      } finally {
        this.telemetry.toolHint = undefined;
      }
      result = await call;
    } catch (error) {
      throw this.refundAndTranslate(error, budget, reserved, started);
    }
    if (budget) this.charge(budget, "tools/call", result);
    return this.redactResults ? this.redactor.redactValue(result) : result;
  }

  override async ping(options: CallOptions = {}): Promise<void> {
    const started = performance.now();
    try {
      await super.ping(baseCall(options));
    } catch (error) {
      throw this.translate(error, started);
    }
  }

  override async close(): Promise<void> {
    await super.close();
    this.telemetry.closed();
  }

  /** close(), for `await using client = new McpClient(...)` (defined where the runtime has the symbol). */
  declare [Symbol.asyncDispose]: () => Promise<void>;

  // The budget a call draws from; checked only when the client could send the call at all,
  // so a closed or idle client still says so rather than blaming the budget.
  private budgetFor(options: CallOptions, method: string): McpBudget | undefined {
    const budget = options?.budget ?? this.defaultBudget;
    if (budget === undefined || this.state !== "ready") return undefined;
    const problem = budgetProblem(budget);
    if (problem) throw this.error("MCP_INVALID_ARGUMENT", `${method}: ${problem}`, { method, phase: "request" });
    return budget;
  }

  // Takes the request's bytes out of the budget before anything is written.
  private reserve(budget: McpBudget, method: string, bytes: number): number {
    if (bytes > budget.requestBytes) {
      throw this.budgetStop(method, `request needs ${bytes} bytes, ${budget.requestBytes} left in the request budget`, "not-sent");
    }
    if (budget.responseBytes <= 0) throw this.budgetStop(method, "no bytes left in the response budget", "not-sent");
    budget.requestBytes -= bytes;
    return bytes;
  }

  // Takes the response's bytes out of the budget; an answer the budget cannot hold is
  // dropped before it reaches the agent (the server did run the call: outcome "unknown").
  private charge(budget: McpBudget, method: string, result: unknown): void {
    const bytes = jsonBytes(result) ?? 0;
    if (bytes > budget.responseBytes) {
      const left = budget.responseBytes;
      budget.responseBytes = 0;
      throw this.budgetStop(method, `response of ${bytes} bytes is over the ${left} bytes left in the response budget; discarded`, "unknown");
    }
    budget.responseBytes -= bytes;
  }

  private budgetStop(method: string, why: string, outcome: "not-sent" | "unknown"): McpError {
    this.stopCounts.budget += 1;
    return this.error("MCP_ABORTED", `${method}: stopped by the budget: ${why}`, { method, phase: "request", reason: "budget", outcome });
  }

  // A request that never left the client gives its bytes back.
  private refundAndTranslate(error: unknown, budget: McpBudget | undefined, reserved: number, started: number): unknown {
    const sent = error instanceof BaseMcpError && error.requestId !== undefined && error.outcome !== "not-sent";
    if (budget && reserved > 0 && !sent) budget.requestBytes += reserved;
    return this.translate(error, started);
  }

  // Turns the reference client's error into this package's: same code and fields, text
  // redacted, the stop reason named, and the context of a fault report attached.
  private translate(error: unknown, started: number): unknown {
    if (error instanceof McpError || !(error instanceof BaseMcpError)) return error;
    const facts = this.telemetry.factsOf(error);
    const details: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(error)) details[key] = value;
    delete details.code;
    if (typeof error.stderr === "string") details.stderr = this.redactTail(error.stderr, error.stderrTruncated ?? false);
    if (error.data !== undefined) details.data = this.redactor.redactValue(error.data);
    const reason = stopReasonOfError(error);
    if (reason) {
      details.reason = reason;
      this.stopCounts[reason] += 1;
    }
    return this.error(error.code, spawnMessage(error, this.cwd, this.identity.executable), { ...details, cause: error.cause }, facts?.durationMs ?? performance.now() - started, facts?.instance);
  }

  private error(
    code: McpError["code"],
    message: string,
    details: ConstructorParameters<typeof McpError>[2],
    durationMs = 0,
    instance = this.telemetry.current ?? this.telemetry.last,
  ): McpError {
    const tail = details?.stderr !== undefined ? { text: details.stderr, truncated: details.stderrTruncated ?? false } : this.stderr;
    const context: FaultContext = {
      runId: this.runId,
      executable: this.redactor.redact(basename(this.identity.executable)),
      serverHash: () => this.serverHash,
      ...(instance ? { instanceId: instance.id } : {}),
      ...(instance?.pid !== undefined ? { pid: instance.pid } : {}),
      ...(instance?.serverInfo ? { serverInfo: { ...instance.serverInfo } } : {}),
      ...(instance?.protocolVersion ? { protocolVersion: instance.protocolVersion } : {}),
      ...(instance?.exit ? { exit: { ...instance.exit } } : {}),
      durationMs,
      stderr: reportTail(tail.text, tail.truncated),
    };
    return new McpError(code, this.redactor.redact(message), details, context);
  }

  // A tail's end is always treated as cut: the server may still be writing, or may have
  // died (or been killed) in the middle of a secret.
  private redactTail(text: string, truncated: boolean): string {
    return this.redactor.redact(text, { headCut: truncated, open: true });
  }
}

defineAsyncDispose(McpClient);

// The last REPORT_STDERR_BYTES of an already redacted tail, cut on a character boundary.
function reportTail(text: string, truncated: boolean): { tail: string; truncated: boolean } {
  const bytes = Buffer.from(text);
  if (bytes.length <= REPORT_STDERR_BYTES) return { tail: text, truncated };
  return { tail: decodeWholeCharacters(bytes.subarray(bytes.length - REPORT_STDERR_BYTES), true), truncated: true };
}

function baseCall(options: CallOptions): BaseCallOptions {
  if (options === null || typeof options !== "object") return options;
  const { budget: _budget, ...rest } = options;
  return rest;
}
