// The grader's native result (CONTRACT §2; its types in result-types.ts): `gradeResult`, the
// result of a grade from its checks, `couldNotGrade`, the one builder of an `error` result,
// and the CLI's exit status.

import { notRunChecks } from "./build-checks.ts";
import { maxScoreOf, type CheckStatus, type LabManifest, type Lang } from "./manifest.ts";
import { todoProgress } from "./report/progress.ts";
import type { CheckResult, GradeResult, ResultHead } from "./result-types.ts";

export type { CheckResult, GradeResult, ResultHead, TestOutcome, TodoProgress, TodoState, TraceEntry } from "./result-types.ts";

/** Exit status of the CLI for a result: 0 pass, 1 fail, 2 could not grade. */
export function exitCodeOf(status: CheckStatus): 0 | 1 | 2 {
  return status === "pass" ? 0 : status === "fail" ? 1 : 2;
}

// The result of a grade that could not be finished: status error, no score, and every check
// the lab defines listed as an error with this message (none when the lab did not load).
export function couldNotGrade(head: ResultHead, manifest: LabManifest | undefined, message: string, timing: Pick<GradeResult, "durationMs" | "phases"> = { durationMs: 0 }): GradeResult {
  return {
    version: 1,
    ...head,
    status: "error",
    score: 0,
    maxScore: manifest ? maxScoreOf(manifest) : 0,
    bonus: { score: 0, maxScore: 0 },
    message,
    checks: manifest ? notRunChecks(manifest, head.lang, message) : [],
    ...timing,
  };
}

/** What the result of a finished grade is made of. */
export interface GradeOutcome {
  head: ResultHead;
  manifest: LabManifest;
  lang: Lang;
  started: number;
  phases: Record<string, number>;
  checks: CheckResult[];
  /** Why the run as a whole cannot be graded, when it cannot. */
  error?: string;
  /** The submission's TODO(...) markers (progress by TODO), when the lab lists TODOs. */
  todoMarkers?: Set<string>;
}

// The grade from its checks: pass only when every graded check passes; an error scores nothing.
export function gradeResult(outcome: GradeOutcome): GradeResult {
  const { checks, manifest } = outcome;
  const graded = checks.filter((c) => c.kind !== "homework");
  const homeworkChecks = checks.filter((c) => c.kind === "homework");
  const status: CheckStatus = outcome.error ? "error" : graded.every((c) => c.status === "pass") ? "pass" : graded.some((c) => c.status === "error") ? "error" : "fail";
  const durationMs = Date.now() - outcome.started;
  const result: GradeResult = {
    version: 1,
    ...outcome.head,
    status,
    // A grade that could not be finished scores nothing: its passes cannot be trusted.
    score: status === "error" ? 0 : graded.reduce((sum, c) => sum + c.score, 0),
    maxScore: maxScoreOf(manifest),
    bonus: {
      score: status === "error" ? 0 : homeworkChecks.reduce((sum, c) => sum + c.score, 0),
      maxScore: homeworkChecks.reduce((sum, c) => sum + c.maxScore, 0),
    },
    checks,
    durationMs,
    phases: { ...outcome.phases, totalMs: durationMs },
  };
  if (status === "error") result.message = outcome.error ?? graded.find((c) => c.status === "error")?.message ?? "";
  if (manifest.todos) result.todos = todoProgress(manifest.todos, checks, outcome.lang, outcome.todoMarkers);
  return result;
}
