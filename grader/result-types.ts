// The native result's types (CONTRACT §2) and the details the report formats use: types
// only, so every module that builds or renders a result imports them without importing the
// modules that build it (grade-result.ts re-exports them).

import type { CheckKind, CheckStatus, Lang } from "./manifest.ts";

export type TodoState = "done" | "not-yet" | "broken" | "unchecked";

export interface TodoProgress {
  tag: string;
  /** The tag as the report shows it in the report's language (an English name for a Chinese tag). */
  label?: string;
  title: string;
  section: string;
  lesson: string;
  state: TodoState;
  /** Checks with a failure charged to this TODO. */
  failing: string[];
  /** The failures charged to this TODO: check id and test title (none for a check without tests). */
  charged?: Array<{ check: string; test?: string }>;
  /** Other TODOs, not done yet, that this TODO's own failing tests need first (state stays "done"). */
  waitingOn: string[];
}

/** One message the fixture server logged (dir "in" = received, "out" = sent). */
export interface TraceEntry {
  dir: "in" | "out";
  msg: unknown;
}

export interface TestOutcome {
  title: string;
  /** The title in the report's language, where the lab translates it (the title itself stays as the tests wrote it). */
  label?: string;
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

/** What a result says about the grade itself, before any check: who, when, with what. */
export type ResultHead = Pick<GradeResult, "lab" | "seed" | "lang" | "submission" | "startedAt">;
