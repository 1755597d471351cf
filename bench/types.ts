// The shapes bench/worker.ts reports and bench/run.ts collects.

import type { ClientName, ServerName } from "./clients.ts";
import type { Summary } from "./stats.ts";

export const TASKS = ["rtt", "burst", "arg", "flood"] as const;
export type Task = (typeof TASKS)[number];

export interface WorkerOptions {
  task: Task;
  client: ClientName;
  server: ServerName;
  /** rtt: measured calls; burst: calls at once; arg and flood: bytes. */
  size: number;
  /** flood: a client that neither fails nor answers by then is reported as hanging, in ms. */
  deadlineMs: number;
}

export interface RttResult {
  task: "rtt";
  coldStartMs: number;
  /** Per-call round trip, in microseconds. */
  roundTripUs: Summary;
  calls: number;
}

export interface BurstResult {
  task: "burst";
  calls: number;
  elapsedMs: number;
  callsPerSecond: number;
  failures: number;
  firstError?: string;
  memory: Memory;
}

export interface ArgResult {
  task: "arg";
  bytes: number;
  ok: boolean;
  elapsedMs: number;
  error?: string;
  maxStallMs: number;
  memory: Memory;
}

export interface FloodResult {
  task: "flood";
  bytes: number;
  /** The call rejected (as it must); false when it resolved or was still pending at the deadline. */
  failed: boolean;
  timeToFailMs: number;
  errorCode?: string;
  error?: string;
  maxStallMs: number;
  memory: Memory;
}

export type WorkerResult = RttResult | BurstResult | ArgResult | FloodResult;

/** Resident memory of the client process, in MiB. */
export interface Memory {
  /** RSS right before the measured work started. */
  beforeMiB: number;
  /** Highest RSS the process ever had (getrusage maxRSS), read right after the work. */
  peakMiB: number;
  /** peak - before: an upper bound on what the work itself took. */
  growthMiB: number;
}

