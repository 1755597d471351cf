// Wall time of a full grade, exactly as a learner runs it: `npm run grade -- ...`, from
// spawn to exit, with the exit status and the result file's status kept beside the time
// so a fast but broken grade is visible as such.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type GradeTarget = "solution" | "starter";

export interface GradeSample {
  target: GradeTarget;
  ms: number;
  exitCode: number | null;
  /** `status` from the --json result file, or why it could not be read. */
  status: string;
  /** `phases` from the result file: when each phase ended, ms since the grade began. */
  phases?: Record<string, number>;
}

/** A grade that takes longer than this is stopped and reported as such. */
export const GRADE_DEADLINE_MS = 60_000;

export function graderExists(root: string): boolean {
  return existsSync(join(root, "grader", "cli.ts"));
}

// Runs one full grade of the solution (`--solution`) or of the starter (the default target).
export function timeGrade(root: string, target: GradeTarget): Promise<GradeSample> {
  const dir = mkdtempSync(join(tmpdir(), "lab33-bench-grade-"));
  const resultFile = join(dir, "result.json");
  const args = ["run", "--silent", "grade", "--", ...(target === "solution" ? ["--solution"] : []), "--json", resultFile];
  return new Promise((resolve, reject) => {
    const began = performance.now();
    // Its own process group, so a grade that overruns is stopped with everything it started.
    const child = spawn("npm", args, { cwd: root, stdio: ["ignore", "ignore", "pipe"], detached: true });
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
      reject(error);
    });
    child.on("exit", (exitCode, signal) => {
      const ms = performance.now() - began;
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
      resolve(phases ? { target, ms, exitCode, status, phases } : { target, ms, exitCode, status });
    });
  });
}
