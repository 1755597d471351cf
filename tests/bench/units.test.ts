// The benchmark's pure parts: statistics, formatting and goal judging, on made-up figures.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeCpuGroup } from "../../bench/grader-timing.ts";
import { GOAL_LIMITS, judgeGoals, type GoalInputs } from "../../bench/goals.ts";
import { formatCell, formatRatio, formatValue, renderMarkdown, renderText } from "../../bench/report.ts";
import type { BenchConfig, BenchResults, Row, Section } from "../../bench/results.ts";
import { buildSections } from "../../bench/sections.ts";
import { figure, median, quantile, summarize } from "../../bench/stats.ts";
import type { FloodResult } from "../../bench/types.ts";

const CONFIG: BenchConfig = {
  runs: 3,
  rttCalls: 1000,
  burstCalls: 10_000,
  argBytes: [2 ** 20, 10 * 2 ** 20],
  floodBytes: 50 * 2 ** 20,
  floodDeadlineMs: 30_000,
  startupSamples: 5,
  graderRuns: 0,
  budgetS: 170,
};

// A row whose every column has one run with the given value.
function row(id: string, values: Record<string, number>, unit: Row["unit"] = "us"): Row {
  return {
    id,
    label: id,
    unit,
    better: "lower",
    cells: Object.fromEntries(Object.entries(values).map(([key, value]) => [key, figure([value])])),
  };
}

function section(rows: Row[]): Section {
  return {
    id: "s",
    title: "made up",
    columns: [
      { key: "floor", label: "raw floor" },
      { key: "reference", label: "reference" },
      { key: "sdk", label: "SDK" },
    ],
    ratios: [["reference", "floor"]],
    rows,
    notes: [],
  };
}

function flood(overrides: Partial<FloodResult> = {}): FloodResult {
  return {
    task: "flood",
    bytes: CONFIG.floodBytes,
    failed: true,
    timeToFailMs: 5,
    errorCode: "MCP_PROTOCOL_ERROR",
    maxStallMs: 3,
    memory: { beforeMiB: 100, peakMiB: 101, growthMiB: 1 },
    ...overrides,
  };
}

function inputs(overrides: Partial<GoalInputs> = {}): GoalInputs {
  return {
    config: CONFIG,
    sections: [
      section([
        row("rtt-median", { floor: 50, reference: 60, sdk: 130 }),
        row("burst-rate", { floor: 60_000, reference: 40_000, sdk: 15_000 }, "calls/s"),
        row("arg-large-time", { floor: 100, reference: 120, sdk: 300 }, "ms"),
        row("startup-exit", { node: 40, fixture: 44 }, "ms"),
      ]),
    ],
    referenceFlood: [flood(), flood()],
    largeArgOk: [true, true],
    grades: [],
    ...overrides,
  };
}

const byId = (goals: ReturnType<typeof judgeGoals>) => Object.fromEntries(goals.map((goal) => [goal.id, goal]));

describe("bench statistics", () => {
  it("takes nearest-rank quantiles and the middle of an even count as the median", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(values, 0.99)).toBe(99);
    expect(quantile(values, 1)).toBe(100);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(summarize([5, 1, 3])).toEqual({ n: 3, median: 3, p99: 5, min: 1, max: 5 });
  });

  it("leaves failed runs out of a figure's median and range but keeps them in its runs", () => {
    expect(figure([3, Number.NaN, 1, 2])).toEqual({ median: 2, min: 1, max: 3, runs: [3, Number.NaN, 1, 2] });
    expect(Number.isNaN(figure([Number.NaN]).median)).toBe(true);
  });
});

describe("bench formatting", () => {
  it("prints a median with its range in the row's unit, and a ratio of medians", () => {
    expect(formatValue(58.24, "us")).toBe("58.2 µs");
    expect(formatValue(45_000.4, "calls/s")).toBe("45,000/s");
    expect(formatCell(figure([2, 1, 3]), "ms")).toBe("2.00 ms (1.00–3.00)");
    expect(formatCell(undefined, "ms")).toBe("–");
    expect(formatRatio(row("r", { floor: 50, reference: 75 }), "reference", "floor")).toBe("1.50×");
    expect(formatRatio(row("r", { floor: 50 }), "reference", "floor")).toBe("–");
  });

  it("renders the same sections and goals in the terminal table and the document", () => {
    const goals = judgeGoals(inputs());
    const results: BenchResults = {
      schema: 1,
      date: "2026-01-01T00:00:00.000Z",
      mode: "quick",
      durationMs: 1000,
      machine: { node: "20", platform: "linux", arch: "x64", cpuModel: "cpu", cpus: 2, totalMemMiB: 4096, loadAverageAtStart: [1, 1, 1] },
      config: CONFIG,
      sections: inputs().sections,
      goals,
      failures: [{ job: "rtt:sdk:raw:1000", run: 2, error: "exit 1: boom" }],
    };
    const text = renderText(results);
    const doc = renderMarkdown(results, "bench/results/latest.json");
    for (const output of [text, doc]) {
      expect(output).toContain("rtt-median");
      expect(output).toContain("1.20×"); // reference/floor of the round trip
      expect(output).toContain("rtt:sdk:raw:1000");
    }
    expect(doc).toContain("| rtt-median (lower is better) | 50.0 µs | 60.0 µs | 130 µs | 1.20× |");
    expect(doc).toContain("## Reproduce");
  });
});

describe("bench goals", () => {
  it("meets every measured goal on figures inside the limits", () => {
    const goals = byId(judgeGoals(inputs()));
    for (const id of ["rtt", "burst", "large-argument", "flood", "fixture-startup"]) expect(goals[id]?.met).toBe(true);
  });

  it("calls a goal that was not measured not measured, never met", () => {
    const goals = byId(judgeGoals(inputs({ sections: [section([row("rtt-median", { floor: 50, sdk: 130 })])] })));
    expect(goals.rtt?.met).toBeNull();
    expect(goals["grade-solution"]?.met).toBeNull();
    expect(goals["grade-starter"]?.detail).toContain("not measured");
  });

  it("misses the round-trip goal when the reference is slower than half the SDK", () => {
    const goals = byId(judgeGoals(inputs({ sections: [section([row("rtt-median", { floor: 50, reference: 70, sdk: 120 })])] })));
    expect(70 / 50).toBeLessThanOrEqual(GOAL_LIMITS.rttVsFloor);
    expect(goals.rtt?.met).toBe(false);
  });

  it("misses the flood goal when one run failed with another code, grew too much or stalled", () => {
    const wrongCode = byId(judgeGoals(inputs({ referenceFlood: [flood(), flood({ errorCode: "MCP_PROCESS_EXIT" })] })));
    expect(wrongCode.flood?.met).toBe(false);
    const grew = byId(judgeGoals(inputs({ referenceFlood: [flood({ memory: { beforeMiB: 100, peakMiB: 160, growthMiB: 60 } })] })));
    expect(grew.flood?.met).toBe(false);
    const stalled = byId(judgeGoals(inputs({ referenceFlood: [flood({ maxStallMs: 80 })] })));
    expect(stalled.flood?.met).toBe(false);
  });

  it("misses the large-argument goal when a run did not answer correctly, however fast", () => {
    const goals = byId(judgeGoals(inputs({ largeArgOk: [true, false] })));
    expect(goals["large-argument"]?.met).toBe(false);
  });

  it("judges grade time by the median and refuses a fast grade with the wrong outcome", () => {
    // Median 2.5 s: within the 3 s goal although one run took 9 s.
    const fast = [2000, 2500, 9000].map((ms) => ({ target: "solution" as const, ms, exitCode: 0, status: "pass" }));
    expect(byId(judgeGoals(inputs({ grades: fast })))["grade-solution"]?.met).toBe(true);
    const slow = [2000, 3500, 3600].map((ms) => ({ target: "solution" as const, ms, exitCode: 0, status: "pass" }));
    expect(byId(judgeGoals(inputs({ grades: slow })))["grade-solution"]?.met).toBe(false);
    const wrong = fast.map((grade) => ({ ...grade, exitCode: 1, status: "fail" }));
    expect(byId(judgeGoals(inputs({ grades: wrong })))["grade-solution"]?.met).toBe(false);
  });

  it("with a baseline, judges the solution's grade against the baseline's, wall and CPU, and ignores baseline grades elsewhere", () => {
    const baseline = { path: "/elsewhere", commit: "abc1234" };
    const grade = (ms: number, cpuMs: number, isBaseline: boolean) => ({ target: "solution" as const, ms, cpuMs, exitCode: 0, status: "pass", ...(isBaseline ? { baseline: true } : {}) });
    const grades = [grade(2000, 5000, false), grade(1000, 5000, true)];
    const config = { ...CONFIG, graderRuns: 1, baseline };
    const sections = buildSections(config, { workers: new Map(), startup: [], grades, failures: [] }, true);
    const grader = sections.find((candidate) => candidate.id === "grader")!;
    expect(grader.columns.map((column) => column.label)).toEqual(["solution", "solution at abc1234", "starter", "starter at abc1234"]);
    expect(grader.ratios).toEqual([["solution", "solution-before"], ["starter", "starter-before"]]);
    const goals = byId(judgeGoals(inputs({ config, sections, grades })));
    expect(goals["grade-time-vs-baseline"]?.met).toBe(false); // 2.00x
    expect(goals["grade-cpu-vs-baseline"]?.met).toBe(true); // 1.00x
    expect(goals["grade-solution"]?.detail).toContain("over 1 run(s)");
    expect(byId(judgeGoals(inputs()))["grade-time-vs-baseline"]).toBeUndefined();
  });
});

describe("makeCpuGroup (the grade's CPU, counted by a control group)", () => {
  // A made-up hierarchy: the files the kernel would show, written by the test.
  const fake = (file: string) => {
    const base = mkdtempSync(join(tmpdir(), "lab33-cgroup-"));
    writeFileSync(join(base, file), "0\n");
    return base;
  };

  it("is undefined where no hierarchy counts CPU time", () => {
    const base = mkdtempSync(join(tmpdir(), "lab33-cgroup-"));
    try {
      expect(makeCpuGroup("g", [base, join(base, "absent")])).toBeUndefined();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("reads a v1 group's cpuacct.usage (ns) once the group is empty", () => {
    const base = fake("cpuacct.usage");
    try {
      const group = makeCpuGroup("g", [base])!;
      expect(group.procs).toBe(join(base, "g", "cgroup.procs"));
      writeFileSync(join(base, "g", "cpuacct.usage"), "1500000000\n");
      writeFileSync(group.procs, "");
      expect(group.finish()).toBe(1500);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("reads a v2 group's usage_usec, and says nothing where the figure is missing", () => {
    const base = fake("cpu.stat");
    writeFileSync(join(base, "cgroup.controllers"), "cpu\n");
    try {
      const group = makeCpuGroup("g", [base])!;
      writeFileSync(join(base, "g", "cpu.stat"), "usage_usec 2345678\nuser_usec 2000000\n");
      expect(group.finish()).toBe(2346);
      const empty = makeCpuGroup("h", [base])!;
      expect(empty.finish()).toBeUndefined();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
