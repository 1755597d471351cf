// Trace and metrics: the reference client's observer hook turned into trace events (one per
// settled request, one per server lifecycle step), per-method latency percentiles and exit
// reasons. Events carry ids, names, statuses and durations only: never arguments, results
// or content, and every server-provided string is redacted.

import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { ClientObserver, InitializeResult } from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import type { McpErrorCode } from "./errors.ts";
import type { Redactor } from "./redact.ts";

export type McpTraceEvent =
  | {
      kind: "request";
      runId: string;
      serverInstanceId: string;
      requestId: number;
      method: string;
      tool?: string;
      status: "ok" | McpErrorCode;
      durationMs: number;
    }
  | {
      kind: "server";
      runId: string;
      serverInstanceId: string;
      phase: "spawned" | "initialized" | "exited" | "closed";
      pid?: number;
      protocolVersion?: string;
      serverInfo?: { name: string; version: string };
      exitCode?: number | null;
      signal?: string | null;
    };

/** Latency of one method over its most recent requests, in ms. */
export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Latency samples kept per method (the most recent ones). */
export const LATENCY_WINDOW = 1024;

/** One server process the client started. */
export interface ServerInstance {
  readonly id: string;
  readonly pid: number | undefined;
  protocolVersion?: string;
  serverInfo?: { name: string; version: string };
  exit?: { exitCode: number | null; signal: string | null };
  closedReported?: boolean;
}

/** Where and how long a request ran; looked up by its rejection when the error is translated. */
export interface RequestFacts {
  instance: ServerInstance | undefined;
  durationMs: number;
}

// Keeps the last LATENCY_WINDOW samples in a ring and sorts a copy when read.
export class LatencyWindow {
  private readonly samples: number[] = [];
  private next = 0;
  count = 0;

  add(ms: number): void {
    this.count += 1;
    if (this.samples.length < LATENCY_WINDOW) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % LATENCY_WINDOW;
  }

  summary(): LatencySummary {
    const sorted = [...this.samples].sort((a, b) => a - b);
    // Nearest rank: the smallest sample with at least q of the samples at or below it.
    const rank = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0;
    return { count: this.count, p50: rank(0.5), p95: rank(0.95), p99: rank(0.99), max: sorted.at(-1) ?? 0 };
  }
}

export class Telemetry implements ClientObserver {
  readonly runId: string;
  private readonly onTrace: ((event: McpTraceEvent) => void) | undefined;
  private readonly redactor: Redactor;
  private readonly latency = new Map<string, LatencyWindow>();
  private readonly facts = new WeakMap<object, RequestFacts>();
  private readonly exitReasons: Record<string, number> = {};
  current: ServerInstance | undefined;
  last: ServerInstance | undefined;
  /** The tool name of the tools/call being registered right now (set by the client around
   *  the reference client's synchronous registration; the hook itself only sees the method). */
  toolHint: string | undefined;

  constructor(runId: string, onTrace: ((event: McpTraceEvent) => void) | undefined, redactor: Redactor) {
    this.runId = runId;
    this.onTrace = onTrace;
    this.redactor = redactor;
  }

  spawned(event: { pid: number | undefined }): void {
    const instance: ServerInstance = { id: randomUUID(), pid: event.pid };
    this.current = instance;
    this.last = instance;
    this.emit({ kind: "server", runId: this.runId, serverInstanceId: instance.id, phase: "spawned", pid: event.pid });
  }

  request(event: { id: number; method: string; settled: Promise<unknown> }): void {
    const instance = this.current;
    const hint = event.method === "tools/call" ? this.toolHint : undefined;
    const started = performance.now();
    const finish = (status: "ok" | McpErrorCode, error?: unknown) => {
      const durationMs = performance.now() - started;
      this.window(event.method).add(durationMs);
      if (error !== null && typeof error === "object") this.facts.set(error, { instance, durationMs });
      const tool = hint === undefined ? undefined : this.redactor.redact(hint);
      this.emit({
        kind: "request",
        runId: this.runId,
        serverInstanceId: instance?.id ?? "",
        requestId: event.id,
        method: event.method,
        ...(tool === undefined ? {} : { tool }),
        status,
        durationMs,
      });
    };
    event.settled.then(
      () => finish("ok"),
      (error: { code?: McpErrorCode }) => finish(error?.code ?? "MCP_PROTOCOL_ERROR", error),
    );
  }

  exited(event: { exitCode: number | null; signal: string | null; expected: boolean }): void {
    const instance = this.current;
    this.current = undefined;
    const how = event.signal ? `signal ${event.signal}` : `code ${event.exitCode}`;
    const key = `${event.expected ? "expected" : "unexpected"} ${how}`;
    this.exitReasons[key] = (this.exitReasons[key] ?? 0) + 1;
    if (!instance) return;
    instance.exit = { exitCode: event.exitCode, signal: event.signal };
    this.emit({
      kind: "server",
      runId: this.runId,
      serverInstanceId: instance.id,
      phase: "exited",
      ...(instance.pid === undefined ? {} : { pid: instance.pid }),
      exitCode: event.exitCode,
      signal: event.signal,
    });
  }

  // Called by the client when a handshake succeeded; once per server instance.
  initialized(result: InitializeResult): void {
    const instance = this.current;
    if (!instance || instance.protocolVersion !== undefined) return;
    instance.protocolVersion = this.redactor.redact(String(result.protocolVersion));
    const info = result.serverInfo as { name?: unknown; version?: unknown } | undefined;
    instance.serverInfo = {
      name: this.redactor.redact(String(info?.name ?? "")),
      version: this.redactor.redact(String(info?.version ?? "")),
    };
    this.emit({
      kind: "server",
      runId: this.runId,
      serverInstanceId: instance.id,
      phase: "initialized",
      ...(instance.pid === undefined ? {} : { pid: instance.pid }),
      protocolVersion: instance.protocolVersion,
      serverInfo: { ...instance.serverInfo },
    });
  }

  // Called once the client's close() resolved: the last server, if any, is closed.
  closed(): void {
    const instance = this.last;
    if (!instance || instance.closedReported) return;
    instance.closedReported = true;
    this.emit({ kind: "server", runId: this.runId, serverInstanceId: instance.id, phase: "closed" });
  }

  factsOf(error: unknown): RequestFacts | undefined {
    return error !== null && typeof error === "object" ? this.facts.get(error) : undefined;
  }

  latencySummary(): Record<string, LatencySummary> {
    const out: Record<string, LatencySummary> = {};
    for (const [method, window] of this.latency) out[method] = window.summary();
    return out;
  }

  exitReasonCounts(): Record<string, number> {
    return { ...this.exitReasons };
  }

  private window(method: string): LatencyWindow {
    let window = this.latency.get(method);
    if (!window) {
      window = new LatencyWindow();
      this.latency.set(method, window);
    }
    return window;
  }

  private emit(event: McpTraceEvent): void {
    try {
      this.onTrace?.(event);
    } catch {
      // A trace sink that throws must not change any call's outcome.
    }
  }
}
