// The grader's native result (CONTRACT §2), plus the details the report formats use, and the
// one builder of a could-not-grade result.

import { notRunChecks } from "./build-checks.ts";
import { maxScoreOf, type CheckKind, type CheckStatus, type LabManifest, type Lang } from "./manifest.ts";
import type { TodoProgress } from "./report/progress.ts";

/** One message the fixture server logged (dir "in" = received, "out" = sent). */
export interface TraceEntry {
  dir: "in" | "out";
  msg: unknown;
}

export interface TestOutcome {
  title: string;
  status: "pass" | "fail" | "skip";
  message?: string;
  durationMs?: number;
  /** Messages the fixture server saw during this test (first workspace), for failed tests. */
  trace?: TraceEntry[];
}

export interface CheckResult {
  id: string;
  kind: CheckKind;
  status: CheckStatus;
  score: number;
  maxScore: number;
  /** Why, in the learner's language. */
  message: string;
  /** What to read or try; present when the check did not pass. */
  hint?: string;
  lesson?: string;
  title: string;
  standard: string;
  deduction: string;
  tests: TestOutcome[];
}

export interface GradeResult {
  /** Version of this result format. */
  version: 1;
  lab: string;
  status: CheckStatus;
  score: number;
  maxScore: number;
  /** Homework bonus, never part of score/maxScore or status. */
  bonus: { score: number; maxScore: number };
  seed: number;
  lang: Lang;
  /** Present when status is error. */
  message?: string;
  submission: string;
  startedAt: string;
  durationMs: number;
  /** When each phase of the grade ended, in ms since it started (copyMs, typecheckEndMs,
   *  importCheckEndMs, testsEndMs, totalMs); the type check and the import check overlap the tests. */
  phases?: Record<string, number>;
  checks: CheckResult[];
  /** Progress by the starter's TODOs, in order, when the lab's manifest lists them. */
  todos?: TodoProgress[];
}

/** Exit status of the CLI for a result: 0 pass, 1 fail, 2 could not grade. */
export function exitCodeOf(status: CheckStatus): 0 | 1 | 2 {
  return status === "pass" ? 0 : status === "fail" ? 1 : 2;
}

/** What a result says about the grade itself, before any check: who, when, with what. */
export type ResultHead = Pick<GradeResult, "lab" | "seed" | "lang" | "submission" | "startedAt">;

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
