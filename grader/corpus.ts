// The corpus of known-bad submissions (labs/<lab>/corpus/<name>/). Each entry has an
// expected.json and either a src/ folder of its own (hostile or hand-written clients) or a
// mutation.json: small find/replace edits that turn a copy of the reference solution into
// a submission with exactly one defect. Mutations keep the corpus in step with the
// solution; an edit whose `find` text is gone fails loudly instead of grading the wrong code.

import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { CheckStatus } from "./manifest.ts";
import type { GradeResult } from "./result-types.ts";
import { makeGradeGroup } from "./sandbox/cgroup.ts";

export interface Mutation {
  file: string;
  find: string;
  /** The new text; `<project>` in it stands for the project's folder (an absolute path). */
  replace: string;
}

/** What `<project>` in a mutation's replacement becomes: the project folder, from the solution's. */
const PROJECT_MARK = "<project>";

export interface CorpusExpectation {
  /** The defect, in one sentence (English, for maintainers). */
  defect: string;
  /** The overall status the grader must report. */
  status: CheckStatus;
  /** Checks that must fail (or be error, for could-not-grade entries). */
  mustFail: string[];
  /** Checks that must pass; the happy path for every entry that still works at all. */
  mustPass: string[];
  /** Text the result's message must contain (could-not-grade entries: the file and line). */
  messageIncludes?: string[];
  /** Harmful or racy outside the OS sandbox (it writes into the project or the machine, or
   *  leaves a daemon the unsandboxed scans can miss): graded only where the sandbox is available. */
  needsSandbox?: boolean;
  /** Graded with `--sandbox off` too: the layer it proves holds without the OS sandbox. */
  sandboxOff?: boolean;
  /** The overall status with `--sandbox off`, where it differs (a guard's violation record
   *  reaches the run from a host without a root of its own, and makes the grade an error). */
  statusSandboxOff?: CheckStatus;
  /** Overall deadline for this entry's grade, in ms (entries that can only end at the deadline). */
  deadlineMs?: number;
  /** Memory limit of this entry's grade as a whole, in MiB (GradeOptions.memoryMb). */
  memoryMb?: number;
  /** Graded only where the grader can make the grade a control group with a memory limit
   *  (sandbox/cgroup.ts): without one, the entry would take the machine's memory. */
  needsMemoryGroup?: boolean;
  /**
   * Every graded check not named in mustFail must pass (a single defect is charged to its
   * own dimensions only); a check may fail only where each failed test says which other TODO
   * it needs first ("needs TODO(x) first"). Default: true for mutation entries (one defect
   * each), false for hand-written clients.
   */
  mustPassOthers?: boolean;
  /** Grade the homework too (for entries whose defect a homework check must catch). */
  homework?: boolean;
  /** Text the result's message must not contain (what the grader must not have read). */
  messageExcludes?: string[];
  /** Text a check's message must contain, by check id. */
  checkMessageIncludes?: Record<string, string>;
}

/** Whether this machine gives a grade a control group with a memory limit (corpus entries that need one). */
export function memoryGroupAvailable(): boolean {
  const made = makeGradeGroup(64);
  if (!("group" in made)) return false;
  void made.group.remove();
  return true;
}

export interface CorpusEntry {
  name: string;
  dir: string;
  expected: CorpusExpectation;
  mutations?: Mutation[];
}

export function listCorpus(labDir: string): CorpusEntry[] {
  const root = join(labDir, "corpus");
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const dir = join(root, name);
      const expected = JSON.parse(readFileSync(join(dir, "expected.json"), "utf8")) as CorpusExpectation;
      const mutationFile = join(dir, "mutation.json");
      const mutations = existsSync(mutationFile) ? (JSON.parse(readFileSync(mutationFile, "utf8")) as Mutation[]) : undefined;
      return mutations ? { name, dir, expected, mutations } : { name, dir, expected };
    });
}

// Returns a folder to grade: the entry itself, or solution + mutations written under `work`.
export function materialize(entry: CorpusEntry, solutionDir: string, work: string): string {
  if (!entry.mutations) return entry.dir;
  const dest = join(work, entry.name);
  mkdirSync(dest, { recursive: true });
  cpSync(solutionDir, dest, { recursive: true });
  for (const m of entry.mutations) {
    const file = join(dest, m.file);
    const text = readFileSync(file, "utf8");
    const at = text.indexOf(m.find);
    if (at === -1) throw new Error(`corpus ${entry.name}: ${m.file} no longer contains ${JSON.stringify(m.find.slice(0, 80))}`);
    if (text.indexOf(m.find, at + 1) !== -1) throw new Error(`corpus ${entry.name}: ${m.file} contains ${JSON.stringify(m.find.slice(0, 80))} more than once`);
    const replace = m.replace.split(PROJECT_MARK).join(resolve(solutionDir, "..", "..", ".."));
    writeFileSync(file, text.slice(0, at) + replace + text.slice(at + m.find.length));
  }
  return dest;
}

/** Why a check did not pass, in one line: its message, then each failing test's title and message. */
export function whyNotPassed(check: { message?: string; tests: Array<{ title: string; status: string; message?: string }> }): string {
  return [check.message, ...check.tests.filter((t) => t.status !== "pass").map((t) => `${t.title}: ${t.message ?? ""}`)].join(" | ");
}

/** Characters of each failed test's message a miss shows. */
const MISS_DETAIL_CHARS = 400;
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** The message of a test that fails only because it leans on another TODO (lang "en"). */
const NEEDS = /^needs TODO\([^)]+\) first: /;

/**
 * What a grade of an entry (lang "en") got wrong against its expected.json, one line each;
 * empty when it met every expectation. `checkIds` are the lab's checks, each of which a
 * result must list. The corpus tests and `corpus:stress` judge every grade with this.
 */
export function missedExpectations(entry: CorpusEntry, result: GradeResult, sandbox: "auto" | "off", checkIds: string[]): string[] {
  const e = entry.expected;
  const misses: string[] = [];
  const byId = new Map(result.checks.map((c) => [c.id, c]));
  const status = sandbox === "off" ? (e.statusSandboxOff ?? e.status) : e.status;
  if (result.status !== status) {
    // Which checks did not pass and why: a flip must be explainable.
    const notPassed = result.checks.filter((c) => c.status !== "pass").map((c) => `${c.id} ${c.status}: ${whyNotPassed(c)}`);
    misses.push(`status ${result.status}, expected ${status}${result.message ? ` (${result.message})` : ""}${notPassed.length > 0 ? `; ${notPassed.join("; ")}` : ""}`);
  }
  for (const id of e.mustFail) if (byId.get(id)?.status === "pass") misses.push(`${id} passed; it must not`);
  for (const id of e.mustPass) if (byId.get(id)?.status !== "pass") misses.push(`${id} ${byId.get(id)?.status ?? "missing"}; it must pass`);
  for (const text of e.messageIncludes ?? []) if (!(result.message ?? "").includes(text)) misses.push(`the message lacks ${JSON.stringify(text)}: ${JSON.stringify(result.message ?? "")}`);
  const whole = JSON.stringify(result);
  for (const text of e.messageExcludes ?? []) if (whole.includes(text)) misses.push(`the result contains ${JSON.stringify(text)}`);
  for (const [id, text] of Object.entries(e.checkMessageIncludes ?? {})) {
    const message = byId.get(id)?.message ?? "";
    if (!message.includes(text)) misses.push(`${id}'s message lacks ${JSON.stringify(text)}: ${JSON.stringify(message)}`);
  }
  // Every check of the lab is listed, and a grade that could not be finished scores nothing.
  for (const id of checkIds) if (!byId.has(id)) misses.push(`${id} is not in the result`);
  if (result.status === "error" && result.score !== 0) misses.push(`status error with score ${result.score}`);
  if (e.mustPassOthers ?? entry.mutations !== undefined) {
    // One defect, charged to its own dimensions: every other graded check passes, or fails
    // only with tests that say which other TODO they need first.
    for (const c of result.checks) {
      if (c.kind === "homework" || c.status === "pass" || e.mustFail.includes(c.id)) continue;
      const own = c.tests.filter((t) => t.status === "fail" && !NEEDS.test(t.message ?? ""));
      if (c.status === "error" || own.length > 0) {
        // The tests that failed on their own, each with the start of its message: the check's
        // summary lists every failed test, and one long value can cut it before the one that counts.
        const named = own.map((t) => `${t.title}: ${cut(t.message ?? "", MISS_DETAIL_CHARS)}`).join(" | ");
        misses.push(`${c.id} ${c.status}, though this single-defect entry must not fail it: ${named || c.message}`);
      }
    }
  }
  return misses;
}
