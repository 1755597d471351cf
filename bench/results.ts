// The benchmark's result file (bench/results/latest.json): what one `npm run bench` measured,
// on which machine, with which settings, and how the figures compare with the goals.

import type { Baseline } from "./grader-timing.ts";
import type { Figure } from "./stats.ts";

export const RESULTS_SCHEMA = 1;

export type Unit = "us" | "ms" | "s" | "MiB" | "calls/s";

export interface BenchConfig {
  runs: number;
  /** Sequential round trips measured per run (after a warm-up). */
  rttCalls: number;
  /** Calls issued at once in the burst. */
  burstCalls: number;
  /** The two argument sizes, small then large, in bytes. */
  argBytes: [number, number];
  /** Bytes the hostile server writes without a newline. */
  floodBytes: number;
  /** How long a client may take to fail the flood before it is reported as hanging, in ms. */
  floodDeadlineMs: number;
  /** Start-up samples per run, for each command. */
  startupSamples: number;
  /** Full grades per target (0: not measured). */
  graderRuns: number;
  /** Seconds after which no further grade starts, so the whole bench stays under 3 minutes. */
  budgetS: number;
  /** The checkout each grade is paired with (BENCH_BASELINE / --baseline), if any. */
  baseline?: Baseline;
}

/** One table cell: a figure over the runs, and what else a reader must know about it. */
export interface Cell extends Figure {
  note?: string;
}

export interface Row {
  id: string;
  label: string;
  unit: Unit;
  better: "lower" | "higher";
  cells: Record<string, Cell | undefined>;
}

export interface Section {
  id: string;
  title: string;
  columns: Array<{ key: string; label: string }>;
  /** Ratio columns, each numerator / denominator by column key. */
  ratios: Array<[string, string]>;
  rows: Row[];
  notes: string[];
}

export interface Goal {
  id: string;
  text: string;
  /** null: could not be judged (not measured). */
  met: boolean | null;
  detail: string;
}

export interface Failure {
  job: string;
  run: number;
  error: string;
}

export interface BenchResults {
  schema: typeof RESULTS_SCHEMA;
  date: string;
  mode: "full" | "quick";
  durationMs: number;
  machine: {
    node: string;
    platform: string;
    arch: string;
    cpuModel: string;
    cpus: number;
    totalMemMiB: number;
    loadAverageAtStart: number[];
  };
  config: BenchConfig;
  sections: Section[];
  goals: Goal[];
  failures: Failure[];
}

export function findRow(results: Pick<BenchResults, "sections">, id: string): Row | undefined {
  for (const section of results.sections) {
    const row = section.rows.find((candidate) => candidate.id === id);
    if (row) return row;
  }
  return undefined;
}
