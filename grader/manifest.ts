// The shape of a lab manifest (labs/<lab>/lab.ts). The grader reads everything it needs
// about a lab from here: which folders are the starter and the solution, which test files
// and describe blocks back which check, the weights, the rubric text and the hints.

import type { Lang, Texts } from "./message-template.ts";

export type { Lang };
export type Text = Texts;
export type CheckKind = "evidence" | "rubric" | "probe" | "homework";
export type CheckStatus = "pass" | "fail" | "error";

/** The lab graded when none is named (the grade command, the learner's loop, the batch). */
export const DEFAULT_LAB = "33-mcp-lite";

export interface CheckDef {
  /** Stable id, e.g. "evidence/timeout"; also the name of the describe block that backs it. */
  id: string;
  kind: CheckKind;
  /** Points when the check passes. */
  weight: number;
  /** What the check is, in the learner's language. */
  title: Text;
  /** The rubric's pass standard (通过标准). */
  standard: Text;
  /** The rubric's common deduction (常见扣分). */
  deduction: Text;
  /** What to reread or try when the check fails; names a lesson section. */
  hint: Text;
  /** Lesson section the hint points to (a path with #anchor, relative to the repo root). */
  lesson: string;
  /**
   * Describe-block names (the first element of a test's ancestor titles) whose tests back
   * this check. Defaults to [id]; a check graded by the leftover processes has none.
   */
  describes?: string[];
  /**
   * What decides the check: its tests (default), or the processes left alive after close()
   * and after the run ("leftovers": the orphan probe, CONTRACT §2 `probe/orphans`).
   */
  gradedBy?: "tests" | "leftovers";
}

/** One TODO of the starter, in the order the learner should do them. */
export interface TodoDef {
  /** The tag as the starter writes it: TODO(<tag>). The learner deletes the markers when done. */
  tag: string;
  /** What to do, in the learner's language. */
  title: Text;
  /** Lesson section number as the lesson prints it, e.g. "7.5". */
  section: string;
  /** Lesson section (a path with #anchor, relative to the repo root). */
  lesson: string;
  /** Checks that cover this TODO: it is done when they all pass. Homework checks may appear. */
  checks: string[];
  /** The name English reports use when the tag is not English (the seed's first tag is Chinese). */
  name?: string;
  /**
   * The graded tests this TODO owns: a failure of one is charged to it (unless the failure
   * says it needs another TODO first). Each entry is a check id and the test title, or a fixed
   * part of it; the longest part a title contains wins. Tests of a check no TODO owns this way are
   * charged to the first TODO listing the check.
   */
  tests?: Array<{ check: string; test: string }>;
  /** Regular expressions (sources): a failing test whose message matches one is charged to this TODO, whichever test it is. */
  blame?: string[];
}

export interface LabManifest {
  /** Folder name under labs/, e.g. "33-mcp-lite". */
  id: string;
  title: Text;
  /** Folders relative to the lab folder. */
  starter: string;
  solution: string;
  /** The file every submission must have, relative to the submission folder, and its exports. */
  entry: string;
  requiredExports: string[];
  /** Packages (node_modules names) a submission may import; none when absent. */
  allowedPackages?: string[];
  /** Vitest config of the lab, relative to the lab folder; it reads LAB_SUBMISSION and LAB_TEST_FILES. */
  vitestConfig: string;
  /** Test files relative to the lab folder: the evidence tests and the rubric probes. */
  evidenceFiles: string[];
  probeFiles: string[];
  /** Test files (relative to the lab) known to run long: a grade starts them before the others. */
  runFirst?: string[];
  /** Folder (relative to the lab) whose *.test.ts files hold homework/... bonus checks, if present. */
  homeworkDir: string;
  /** Points per passing homework/... describe block (bonus, never part of maxScore). */
  homeworkWeight: number;
  /** What each homework check is called in the report, by its describe name (else the name itself). */
  homeworkTitles?: Record<string, Text>;
  /** Titles of the lab's tests in a language other than the one they are written in, by title or a title's fixed start (the rest is kept). */
  testTitles?: Partial<Record<Lang, Readonly<Record<string, string>>>>;
  checks: CheckDef[];
  /** The starter's TODOs in order, with the checks covering each (the report shows progress by TODO). */
  todos?: TodoDef[];
  /**
   * What kind of value each required export must be; default "class". The grader's import
   * check refuses anything else.
   */
  exportKinds?: Record<string, "class" | "function">;
  /** The statuses the grader must report for the lab's own folders (pinned by tests/grader). */
  expected: {
    solution: Record<string, CheckStatus>;
    starter: Record<string, CheckStatus>;
  };
}

/** The describe names that back a check. */
export function describesOf(check: CheckDef): string[] {
  return check.describes ?? (check.gradedBy === "leftovers" ? [] : [check.id]);
}

/** What a check says to the learner, each in both languages. */
export interface CheckText {
  title: Text;
  standard: Text;
  deduction: Text;
  hint: Text;
}

// One check of a lab's table: its id, kind, weight, the lesson section its hint points to,
// and what it says (the layout both labs' manifests use, one row per check).
export function checkOf(id: string, kind: CheckKind, weight: number, lesson: string, text: CheckText): CheckDef {
  return { id, kind, weight, ...text, lesson };
}

// A check graded by the processes left alive after close() and after the run, not by tests
// of its own: the orphan probe (CONTRACT §2 probe/orphans).
export function leftoversCheck(id: string, kind: CheckKind, weight: number, lesson: string, text: CheckText): CheckDef {
  return { ...checkOf(id, kind, weight, lesson, text), gradedBy: "leftovers" };
}

/** The evidence test file of an evidence check: tests/evidence/<name>.test.ts for evidence/<name>. */
export function evidenceFileOf(check: CheckDef): string {
  return `tests/${check.id}.test.ts`;
}

/** A lab as its manifest file writes it: what follows the conventions is left out. */
export interface LabDefinition extends Omit<LabManifest, "starter" | "solution" | "vitestConfig" | "evidenceFiles" | "homeworkDir" | "expected"> {
  /** Pinned: the graded checks the starter passes as given; it fails every other one. */
  starterPasses: string[];
}

// A lab's manifest from its definition and the conventions every lab follows: the folders
// starter/, solution/ and homework/, vitest.config.ts, one evidence file per evidence check
// (evidenceFileOf), the solution passing every graded check.
export function defineLab(definition: LabDefinition): LabManifest {
  const { starterPasses, ...rest } = definition;
  const ids = rest.checks.map((check) => check.id);
  return {
    ...rest,
    starter: "starter",
    solution: "solution",
    vitestConfig: "vitest.config.ts",
    evidenceFiles: rest.checks.filter((check) => check.kind === "evidence").map(evidenceFileOf),
    homeworkDir: "homework",
    expected: {
      solution: Object.fromEntries(ids.map((id) => [id, "pass"])),
      starter: Object.fromEntries(ids.map((id) => [id, starterPasses.includes(id) ? "pass" : "fail"])),
    },
  };
}

/** The most a submission can score (homework bonus excluded). */
export function maxScoreOf(manifest: LabManifest): number {
  return manifest.checks.reduce((sum, c) => sum + c.weight, 0);
}
