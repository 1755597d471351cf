// The goals, judged on ratios of medians from one run (absolute times do not carry
// over between runs on a noisy machine). A goal that was not measured is null, never met.

import type { GradeSample } from "./grader-timing.ts";
import { findRow, type BenchConfig, type Goal, type Section } from "./results.ts";
import type { FloodResult } from "./types.ts";

export const GOAL_LIMITS = {
  rttVsFloor: 1.5,
  rttVsSdk: 0.5,
  burstVsSdk: 2,
  burstVsFloor: 0.5,
  largeArgVsFloor: 1.5,
  /** Added to maxLineBytes (1 MiB by default) for the flood's memory limit. */
  floodExtraMiB: 32,
  floodStallMs: 50,
  // Issue 10: a grade of the solution in 3 s, of the starter (which hangs) in 4.5 s.
  gradeSolutionMs: 3_000,
  gradeStarterMs: 4_500,
  // Issue 19: a grade of the solution within 1.2x of its time before (judged against a baseline).
  gradeVsBaseline: 1.2,
  startupVsNode: 1.3,
} as const;

/** The reference client's default maxLineBytes, in MiB. */
const MAX_LINE_MIB = 1;

export interface GoalInputs {
  sections: Section[];
  config: BenchConfig;
  /** The reference client's flood results, one per run (null: the run failed to report). */
  referenceFlood: Array<FloodResult | null>;
  /** The reference client's large-argument outcomes, one per run. */
  largeArgOk: Array<boolean | null>;
  grades: GradeSample[];
  /** Why there are no grades, when there are none. */
  gradesMissing?: string;
}

export function judgeGoals(inputs: GoalInputs): Goal[] {
  const { sections, config } = inputs;
  const median = (rowId: string, column: string) => findRow({ sections }, rowId)?.cells[column]?.median ?? Number.NaN;
  const ratio = (rowId: string, top: string, bottom: string) => median(rowId, top) / median(rowId, bottom);
  const fmt = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "not measured");
  const goals: Goal[] = [];

  const rttFloor = ratio("rtt-median", "reference", "floor");
  const rttSdk = ratio("rtt-median", "reference", "sdk");
  goals.push({
    id: "rtt",
    text: `sequential round trip ≤ ${GOAL_LIMITS.rttVsFloor}× the floor and ≤ ${GOAL_LIMITS.rttVsSdk}× the SDK's`,
    met: judge(rttFloor <= GOAL_LIMITS.rttVsFloor && rttSdk <= GOAL_LIMITS.rttVsSdk, rttFloor, rttSdk),
    detail: `reference/floor ${fmt(rttFloor)}, reference/SDK ${fmt(rttSdk)}`,
  });

  const burstSdk = ratio("burst-rate", "reference", "sdk");
  const burstFloor = ratio("burst-rate", "reference", "floor");
  goals.push({
    id: "burst",
    text: `${config.burstCalls.toLocaleString("en-US")} calls at once: ≥ ${GOAL_LIMITS.burstVsSdk}× the SDK's throughput and ≥ ${GOAL_LIMITS.burstVsFloor}× the floor's`,
    met: judge(burstSdk >= GOAL_LIMITS.burstVsSdk && burstFloor >= GOAL_LIMITS.burstVsFloor, burstSdk, burstFloor),
    detail: `reference/SDK ${fmt(burstSdk)}, reference/floor ${fmt(burstFloor)}`,
  });

  const largeFloor = ratio("arg-large-time", "reference", "floor");
  const okRuns = inputs.largeArgOk.filter((ok) => ok === true).length;
  const allOk = okRuns === inputs.largeArgOk.length && okRuns > 0;
  goals.push({
    id: "large-argument",
    text: `${mib(config.argBytes[1])} argument works with default settings and takes ≤ ${GOAL_LIMITS.largeArgVsFloor}× the floor`,
    met: judge(allOk && largeFloor <= GOAL_LIMITS.largeArgVsFloor, largeFloor),
    detail: `answered correctly in ${okRuns}/${inputs.largeArgOk.length} runs; reference/floor ${fmt(largeFloor)}`,
  });

  const floods = inputs.referenceFlood;
  const protocolErrors = floods.filter((run) => run?.failed && run.errorCode === "MCP_PROTOCOL_ERROR").length;
  const worstGrowth = Math.max(...floods.map((run) => run?.memory.growthMiB ?? Number.NaN));
  const worstStall = Math.max(...floods.map((run) => run?.maxStallMs ?? Number.NaN));
  const worstTime = Math.max(...floods.map((run) => run?.timeToFailMs ?? Number.NaN));
  const memoryLimit = MAX_LINE_MIB + GOAL_LIMITS.floodExtraMiB;
  goals.push({
    id: "flood",
    text:
      `${mib(config.floodBytes)} with no newline: fails fast with MCP_PROTOCOL_ERROR, client memory growth ≤ ` +
      `maxLineBytes + ${GOAL_LIMITS.floodExtraMiB} MiB (${memoryLimit} MiB), no event-loop stall over ${GOAL_LIMITS.floodStallMs} ms`,
    met: judge(
      floods.length > 0 && protocolErrors === floods.length && worstGrowth <= memoryLimit && worstStall <= GOAL_LIMITS.floodStallMs,
      worstGrowth,
      worstStall,
    ),
    detail:
      `MCP_PROTOCOL_ERROR in ${protocolErrors}/${floods.length} runs; worst run: failed after ${worstTime.toFixed(1)} ms, ` +
      `memory growth ${worstGrowth.toFixed(1)} MiB, longest stall ${worstStall.toFixed(1)} ms`,
  });

  const missing = inputs.gradesMissing ?? "no grade ran";
  const own = inputs.grades.filter((grade) => !grade.baseline);
  goals.push(gradeGoal(own, "solution", GOAL_LIMITS.gradeSolutionMs, { exitCode: 0, status: "pass" }, missing));
  goals.push(gradeGoal(own, "starter", GOAL_LIMITS.gradeStarterMs, { exitCode: 1, status: "fail" }, missing));
  if (config.baseline) {
    const against = `the baseline's (${config.baseline.commit ?? config.baseline.path}), graded beside it`;
    for (const [rowId, what] of [["grade-time", "wall"], ["grade-cpu", "CPU"]] as const) {
      const times = ratio(rowId, "solution", "solution-before");
      goals.push({
        id: `${rowId}-vs-baseline`,
        text: `full grade of the solution ≤ ${GOAL_LIMITS.gradeVsBaseline}× ${against}, ${what} time`,
        met: judge(times <= GOAL_LIMITS.gradeVsBaseline, times),
        detail: `solution/baseline ${fmt(times)} (medians); the starter: ${fmt(ratio(rowId, "starter", "starter-before"))}`,
      });
    }
  }

  const startup = ratio("startup-exit", "fixture", "node");
  goals.push({
    id: "fixture-startup",
    text: `fixture server start-up ≤ ${GOAL_LIMITS.startupVsNode}× plain \`node -e ""\``,
    met: judge(startup <= GOAL_LIMITS.startupVsNode, startup),
    detail: `fixture/node ${fmt(startup)} (spawn to exit, stdin at EOF)`,
  });
  return goals;
}

// A goal over a figure that was not measured is null, not missed.
function judge(met: boolean, ...figures: number[]): boolean | null {
  return figures.every((value) => Number.isFinite(value)) ? met : null;
}

function gradeGoal(
  grades: GradeSample[],
  target: GradeSample["target"],
  limitMs: number,
  expected: { exitCode: number; status: string },
  missing: string,
): Goal {
  const samples = grades.filter((grade) => grade.target === target);
  const text = `full grade of the ${target === "solution" ? "solution" : "hanging starter"} ≤ ${limitMs / 1000} s median`;
  if (samples.length === 0) return { id: `grade-${target}`, text, met: null, detail: `not measured: ${missing}` };
  const times = samples.map((sample) => sample.ms).sort((a, b) => a - b);
  const mid = times.length >> 1;
  const medianMs = times.length % 2 ? times[mid]! : (times[mid - 1]! + times[mid]!) / 2;
  const wrong = samples.filter((sample) => sample.exitCode !== expected.exitCode || sample.status !== expected.status);
  const outcome =
    wrong.length === 0
      ? `every run exited ${expected.exitCode} with status "${expected.status}"`
      : `${wrong.length}/${samples.length} runs ended otherwise than exit ${expected.exitCode}/"${expected.status}" ` +
        `(first: exit ${wrong[0]!.exitCode}, status ${wrong[0]!.status})`;
  return {
    id: `grade-${target}`,
    text,
    met: wrong.length === 0 && medianMs <= limitMs,
    detail: `median ${(medianMs / 1000).toFixed(2)} s over ${samples.length} run(s); ${outcome}`,
  };
}

function mib(bytes: number): string {
  return bytes >= 2 ** 20 ? `${+(bytes / 2 ** 20).toFixed(1)} MiB` : `${+(bytes / 1024).toFixed(1)} KiB`;
}
