// Shared helpers of the hardening tests: a reference client wired to a fixture workspace
// with per-test cleanup, a memory sampler, and polling that never asserts on time.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { onTestFinished } from "vitest";
import {
  createFixtureWorkspace,
  isAlive,
  type FixtureOptions,
  type FixtureWorkspace,
} from "../../fixtures/index.ts";
import { McpClient, type McpClientOptions } from "../../labs/33-mcp-lite/solution/src/mcp-client.ts";

/** Longest a poll waits before failing the test with its label, in ms (a hang detector). */
export const POLL_MS = 15_000;

export interface Started {
  client: McpClient;
  ws: FixtureWorkspace;
  /** Pids recorded by the fixture servers (and grandchildren) of this test, alive or not. */
  pids(): number[];
  /** The recorded pids still alive (zombies count as gone). */
  alive(): number[];
}

type ClientExtras = Partial<Omit<McpClientOptions, "executable" | "args">>;

// Builds a reference client for a fresh fixture workspace; cleanup (close, then kill
// whatever the fixture recorded, then remove the workspace) is registered with the test.
export function startClient(fixture: FixtureOptions = {}, options: ClientExtras = {}): Started {
  const ws = createFixtureWorkspace("lab33-hardening-");
  const client = new McpClient({ ...ws.command({ selfDestructMs: 60_000, ...fixture }), timeoutMs: 10_000, ...options });
  onTestFinished(async () => {
    await Promise.race([client.close().catch(() => {}), sleep(10_000)]);
    await ws.cleanup();
  });
  return { client, ws, pids: () => ws.pids(), alive: () => ws.pids().filter(isAlive) };
}

// Polls until the condition holds; throws with the label after POLL_MS. The deadline only
// catches a hang, it never decides an outcome.
export async function until(condition: () => boolean, label: string, ms = POLL_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${label} after ${ms} ms`);
    await sleep(5);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// A full collection on demand, so "retained" memory is measured without garbage that
// V8 simply has not collected yet (pipe chunks are external memory, collected lazily).
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** heapUsed + arrayBuffers after a full collection, in bytes. */
export function retainedBytes(): number {
  collect();
  const now = process.memoryUsage();
  return now.heapUsed + now.arrayBuffers;
}

// Waits until what survives a collection is within `bound` bytes of `baseline`. V8 frees
// ArrayBuffer backing stores on a background sweeper after a collection, so memory that is
// already garbage can still be counted for a moment; memory truly retained never drops,
// and the poll fails after POLL_MS with the last figure.
export async function expectRetainedWithin(baseline: number, bound: number, label: string): Promise<number> {
  const deadline = Date.now() + POLL_MS;
  let growth = retainedBytes() - baseline;
  while (growth >= bound) {
    if (Date.now() > deadline) {
      throw new Error(`${label}: ${(growth / MiB).toFixed(1)} MiB still retained, bound ${(bound / MiB).toFixed(1)} MiB`);
    }
    await sleep(50);
    growth = retainedBytes() - baseline;
  }
  return growth;
}

export interface MemoryPeak {
  /** heapUsed + arrayBuffers after a full collection when sampling started, in bytes. */
  baseline: number;
  /** Largest heapUsed + arrayBuffers seen minus the baseline, in bytes (uncollected garbage included). */
  heapGrowth: number;
  /** Largest rss seen minus the baseline, in bytes. */
  rssGrowth: number;
  /** Largest rss seen, in bytes. */
  rssPeak: number;
  stop(): MemoryPeak;
}

// Samples this process's memory every few ms until stopped. heapUsed + arrayBuffers
// covers both JS strings and Buffers (pipe chunks live outside the JS heap).
export function sampleMemory(intervalMs = 5): MemoryPeak {
  const baseHeap = retainedBytes();
  const base = process.memoryUsage();
  const peak: MemoryPeak = {
    baseline: baseHeap,
    heapGrowth: 0,
    rssGrowth: 0,
    rssPeak: base.rss,
    stop() {
      clearInterval(timer);
      take();
      return peak;
    },
  };
  const take = () => {
    const now = process.memoryUsage();
    peak.heapGrowth = Math.max(peak.heapGrowth, now.heapUsed + now.arrayBuffers - baseHeap);
    peak.rssGrowth = Math.max(peak.rssGrowth, now.rss - base.rss);
    peak.rssPeak = Math.max(peak.rssPeak, now.rss);
  };
  const timer = setInterval(take, intervalMs);
  return peak;
}

export const MiB = 1024 * 1024;

// Resolves with the rejection reason; fails the test when the promise resolves instead.
export async function failure(promise: Promise<unknown>): Promise<any> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}
