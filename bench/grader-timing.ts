// Wall and CPU time of a full grade, exactly as a learner runs it: `npm run grade -- ...`, from
// spawn to exit, with the exit status and the result file's status kept beside the time so a
// fast but broken grade is visible as such. With a baseline (another checkout of the project,
// BENCH_BASELINE or --baseline), every grade is paired with the same grade there, the two run
// back to back in alternating order, so both see the same minute of a noisy machine.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export type GradeTarget = "solution" | "starter";

export interface GradeSample {
  target: GradeTarget;
  ms: number;
  /** CPU time (user + system) of the grade's whole process tree, in ms; absent where unknown. */
  cpuMs?: number;
  /** Where cpuMs comes from: a control group of the grade's own (every process it started,
   *  wherever reaped), or this process's waited-for children (a lower bound: see childrenCpuMs). */
  cpuFrom?: "cgroup" | "children";
  /** A grade of the baseline checkout, not of this one. */
  baseline?: boolean;
  exitCode: number | null;
  /** `status` from the --json result file, or why it could not be read. */
  status: string;
  /** `phases` from the result file: when each phase ended, ms since the grade began. */
  phases?: Record<string, number>;
}

/** The checkout a run compares its grades with. */
export interface Baseline {
  path: string;
  /** Its `git rev-parse --short HEAD`, when it is a git checkout. */
  commit?: string;
}

/** A grade that takes longer than this is stopped and reported as such. */
export const GRADE_DEADLINE_MS = 60_000;

export function graderExists(root: string): boolean {
  return existsSync(join(root, "grader", "cli.ts"));
}

// The baseline named by --baseline or BENCH_BASELINE: a checkout with its own grader and
// node_modules (it grades with its own code), or a clear error.
export function resolveBaseline(path: string | undefined): Baseline | undefined {
  if (path === undefined || path === "") return undefined;
  const full = resolve(path);
  if (!graderExists(full)) throw new Error(`baseline ${full}: no grader/cli.ts there (BENCH_BASELINE / --baseline names another checkout of this project)`);
  if (!existsSync(join(full, "node_modules"))) throw new Error(`baseline ${full}: no node_modules (run npm ci there first)`);
  const git = spawnSync("git", ["-C", full, "rev-parse", "--short", "HEAD"], { encoding: "utf8" });
  const commit = git.status === 0 ? git.stdout.trim() : undefined;
  return commit ? { path: full, commit } : { path: full };
}

// CPU time of this process's children that have been waited for, in ms (Linux: fields
// cutime and cstime of /proc/self/stat, in clock ticks of 10 ms); undefined elsewhere. A
// grade's tree is in it once its `npm` has been reaped, except what the kernel reaps itself:
// when the first process of a PID namespace dies, the processes still in it are reaped with
// SIGCHLD ignored and their CPU time is counted nowhere. In a sandboxed grade that is each
// client host (its namespace's shell is killed when its worker ends) with the fixture servers
// it reaped, and whatever is left when ns-init exits: there the figure is a lower bound
// (measured 2026-12-01: a solution grade about 4.7 s sandboxed, 7.9 s with --sandbox off).
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

/** A control group that counts the CPU time of every process in it, however it ends. */
export interface CpuGroup {
  /** Where the grade's first process writes its pid ("cgroup.procs"). */
  procs: string;
  /** A cgroup v2 group (v1: the cpuacct hierarchy). */
  v2: boolean;
  /** Once the group is empty (a bounded wait): its CPU time in ms, and the group removed. */
  finish(): number | undefined;
}

// Where this machine lets a process make control groups that count CPU time: cgroup v2 (the
// group's cpu.stat, usage_usec) or v1's cpuacct hierarchy (cpuacct.usage, ns). Needs write
// access to the hierarchy (root, or a delegated subtree): undefined where there is none, and
// the bench falls back to childrenCpuMs.
export function makeCpuGroup(name: string, hierarchies = ["/sys/fs/cgroup", "/sys/fs/cgroup/cpuacct"]): CpuGroup | undefined {
  for (const base of hierarchies) {
    const v2 = existsSync(join(base, "cgroup.controllers")) && existsSync(join(base, "cpu.stat"));
    const v1 = existsSync(join(base, "cpuacct.usage"));
    if (!v2 && !v1) continue;
    const dir = join(base, name);
    try {
      mkdirSync(dir);
    } catch {
      continue;
    }
    const usedMs = v2
      ? () => Number(/^usage_usec (\d+)$/m.exec(readFileSync(join(dir, "cpu.stat"), "utf8"))?.[1]) / 1000
      : () => Number(readFileSync(join(dir, "cpuacct.usage"), "utf8")) / 1e6;
    const procs = join(dir, "cgroup.procs");
    return {
      procs,
      v2,
      finish: () => {
        // The grade's sandbox reaps its last processes a moment after npm has exited.
        const busy = () => {
          try {
            return readFileSync(procs, "utf8").trim() !== "";
          } catch {
            return false;
          }
        };
        for (let wait = 0; wait < 100 && busy(); wait++) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        let ms: number | undefined;
        try {
          ms = usedMs();
        } catch {
          // no figure
        }
        try {
          rmdirSync(dir);
        } catch {
          // still in use: left for the machine's own cleanup
        }
        return ms !== undefined && Number.isFinite(ms) ? Math.round(ms) : undefined;
      },
    };
  }
  return undefined;
}

let groups = 0;

// Runs one full grade of the solution (`--solution`) or of the starter (the default target).
// Grades run one at a time. The CPU figure is that of a control group of the grade's own
// where the machine allows one (the grade enters it before npm starts: every process it
// starts is counted, the client hosts included), else this process's children's time before
// and after.
export function timeGrade(root: string, target: GradeTarget, baseline = false): Promise<GradeSample> {
  const dir = mkdtempSync(join(tmpdir(), "lab33-bench-grade-"));
  const resultFile = join(dir, "result.json");
  const args = ["run", "--silent", "grade", "--", ...(target === "solution" ? ["--solution"] : []), "--json", resultFile];
  const group = makeCpuGroup(`lab33-bench-${process.pid}-${groups++}`);
  return new Promise((resolvePromise, reject) => {
    const cpuBefore = childrenCpuMs();
    const began = performance.now();
    // Its own process group, so a grade that overruns is stopped with everything it started;
    // in the CPU group, through a shell that joins it and then becomes npm.
    const command = group ? ["/bin/sh", ["-c", 'echo $$ > "$0" && exec npm "$@"', group.procs, ...args]] as const : ["npm", args] as const;
    // On cgroup v2 a grade's own control group (grader/sandbox/cgroup.ts) is made beside the
    // grader's group, which would take the grade's processes out of this CPU group: there the
    // grade runs without one (LAB_GRADE_MEMORY_MB=0; a tree that predates it ignores the variable).
    const env = group?.v2 ? { ...process.env, LAB_GRADE_MEMORY_MB: "0" } : process.env;
    const child = spawn(command[0], [...command[1]], { cwd: root, env, stdio: ["ignore", "ignore", "pipe"], detached: true });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      if (stderr.length < 4_000) stderr += text;
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, GRADE_DEADLINE_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      group?.finish();
      reject(error);
    });
    child.on("exit", (exitCode, signal) => {
      const ms = performance.now() - began;
      const cpuAfter = childrenCpuMs();
      clearTimeout(timer);
      let status: string;
      let phases: Record<string, number> | undefined;
      try {
        const result = JSON.parse(readFileSync(resultFile, "utf8")) as { status?: unknown; phases?: Record<string, number> };
        status = String(result.status);
        phases = result.phases;
      } catch {
        status = signal ? `killed (${signal}) after ${GRADE_DEADLINE_MS} ms` : `no result file; stderr: ${stderr.trim().slice(0, 300)}`;
      }
      rmSync(dir, { recursive: true, force: true });
      let cpu: Pick<GradeSample, "cpuMs" | "cpuFrom"> = cpuBefore !== undefined && cpuAfter !== undefined ? { cpuMs: cpuAfter - cpuBefore, cpuFrom: "children" } : {};
      const grouped = group?.finish();
      if (grouped !== undefined) cpu = { cpuMs: grouped, cpuFrom: "cgroup" };
      resolvePromise({ target, ms, ...cpu, ...(baseline ? { baseline: true } : {}), exitCode, status, ...(phases ? { phases } : {}) });
    });
  });
}

export interface GradeRunOptions {
  root: string;
  runs: number;
  baseline?: Baseline;
  /** Seconds after which no further round of grades starts. */
  budgetS: number;
  /** When the whole bench began (performance.now()). */
  startedAt: number;
  log: (text: string) => void;
}

export interface GradeRuns {
  grades: GradeSample[];
  failures: Array<{ job: string; run: number; error: string }>;
  cutShort?: string;
}

// Rounds of grades: the solution, then the starter, each paired with the baseline's when there
// is one (this checkout first in odd rounds, the baseline first in even ones). A round starts
// only if the last round's time still fits in the budget.
export async function measureGrades(options: GradeRunOptions): Promise<GradeRuns> {
  const out: GradeRuns = { grades: [], failures: [] };
  let lastRoundMs = 0;
  for (let run = 1; run <= options.runs; run++) {
    const elapsedS = (performance.now() - options.startedAt) / 1000;
    if (run > 1 && elapsedS + lastRoundMs / 1000 > options.budgetS) {
      out.cutShort = `${run - 1} of ${options.runs} runs: the next would pass the ${options.budgetS} s budget`;
      options.log(`grades stopped after ${run - 1} runs (${out.cutShort})`);
      return out;
    }
    const roundStart = performance.now();
    for (const target of ["solution", "starter"] as GradeTarget[]) {
      const trees = options.baseline ? (run % 2 === 1 ? [false, true] : [true, false]) : [false];
      for (const isBaseline of trees) {
        const name = `${isBaseline ? "baseline " : ""}${target}`;
        try {
          const sample = await timeGrade(isBaseline ? options.baseline!.path : options.root, target, isBaseline);
          out.grades.push(sample);
          const cpu = sample.cpuMs === undefined ? "" : `, CPU ${(sample.cpuMs / 1000).toFixed(2)} s`;
          options.log(`grade ${run}/${options.runs} ${name}: ${(sample.ms / 1000).toFixed(2)} s${cpu}, exit ${sample.exitCode}, ${sample.status}`);
        } catch (error) {
          out.failures.push({ job: `grade:${name}`, run, error: (error as Error).message });
        }
      }
    }
    lastRoundMs = performance.now() - roundStart;
  }
  return out;
}
