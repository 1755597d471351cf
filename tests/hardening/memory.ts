// The hardening tests' memory sampler: what a flood leaves retained, and its peak.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { POLL_MS } from "../support.ts";

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
    await new Promise((resolve) => setTimeout(resolve, 50));
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
