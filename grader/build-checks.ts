// Turns the tests a grading run left behind (grader/test-records.ts) into checks, mapped to
// check ids through the describe blocks the manifest names; the check graded by leftovers
// (the orphan probe) from the fixture workspaces' records, the strays the setup file killed
// and the processes still alive after the run.

import { t } from "./i18n.ts";
import { describesOf, type CheckDef, type CheckStatus, type LabManifest, type Lang } from "./manifest.ts";
import type { CheckResult, TestOutcome } from "./result-types.ts";
import { neverStarted, testsOfRun, type BuildInput, type FoundTest, type RunTests } from "./test-records.ts";

export { MAX_MESSAGE_CHARS, outOfMemory, type BuildInput, type ProgressRecord, type StrayRecord, type VitestJson, type WorkspaceRecord } from "./test-records.ts";

// Builds every check; `error` is set when the run as a whole could not be graded.
export function buildChecks(input: BuildInput): { checks: CheckResult[]; error?: string } {
  const run = withLabels(testsOfRun(input), input.manifest, input.lang);
  const checks = [
    ...input.manifest.checks.map((def) => gradedCheck(def, run, input)),
    ...homeworkChecks(run.tests, input.manifest, input.lang),
    ...brokenHomeworkFiles(run, input),
  ];
  return run.runError ? { checks, error: run.runError } : { checks };
}

// Each test's title in the report's language, where the lab translates it (manifest.testTitles).
function withLabels(run: RunTests, manifest: LabManifest, lang: Lang): RunTests {
  const table = manifest.testTitles?.[lang];
  if (!table) return run;
  const labelled = (x: FoundTest): FoundTest => {
    const label = translatedTitle(table, x.outcome.title);
    return label === undefined ? x : { ...x, outcome: { ...x.outcome, label } };
  };
  return { ...run, tests: run.tests.map(labelled) };
}

/** A title from a table keyed by whole titles or by a title's fixed start (the longest wins; the rest is kept as it is). */
export function translatedTitle(table: Readonly<Record<string, string>>, title: string): string | undefined {
  if (Object.hasOwn(table, title)) return table[title];
  let best: string | undefined;
  for (const key of Object.keys(table)) if (key !== "" && title.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  if (best === undefined) return undefined;
  const start = table[best]!;
  const rest = title.slice(best.length);
  // (After a full-width colon the English rest needs no space of its own.)
  return `${start}${start.endsWith("：") ? rest.trimStart() : rest}`;
}

/** A test as the report names it: its title in the report's language where there is one. */
const titleOf = (test: { title: string; label?: string }): string => test.label ?? test.title;

// One check of the manifest: from the leftover processes, or from the tests backing it.
function gradedCheck(def: CheckDef, run: RunTests, input: BuildInput): CheckResult {
  if (def.gradedBy === "leftovers") return orphanCheck(def, input, run);
  const describes = describesOf(def);
  const mine = run.tests.filter((x) => describes.includes(x.describe));
  const ownFiles = new Set(mine.map((x) => x.file));
  if (!run.complete) mine.push(...neverStarted(def, input));
  const broken = fileErrorFor(def, input.manifest, run.fileErrors, ownFiles);
  // A probe file that could not run at all held tests of any rubric check: what did run is
  // not the whole check, so it is never a pass (nor a fail the missing tests might change).
  if (def.kind === "rubric" && broken && !run.runError && mine.length > 0) {
    return checkResult(def, input.lang, "error", t("testsMissing", input.lang, { why: broken }), mine.map((x) => x.outcome), { advise: false });
  }
  return testCheck(def, mine, input.lang, run.runError ?? broken);
}

// Homework: every homework/... describe found, as bonus checks.
function homeworkChecks(tests: FoundTest[], manifest: LabManifest, lang: Lang): CheckResult[] {
  const ids = [...new Set(tests.filter((x) => x.describe.startsWith("homework/")).map((x) => x.describe))].sort();
  const readme = `labs/${manifest.id}/${manifest.homeworkDir}/README.md`;
  return ids.map((id) => {
    const def: CheckDef = {
      id,
      kind: "homework",
      weight: manifest.homeworkWeight,
      title: manifest.homeworkTitles?.[id] ?? { zh: id, en: id },
      standard: { zh: "课后作业（加分项）", en: "homework (bonus)" },
      deduction: { zh: "", en: "" },
      hint: { zh: `见 ${readme}`, en: `see ${readme}` },
      lesson: readme,
    };
    return testCheck(def, tests.filter((x) => x.describe === id), lang, undefined);
  });
}

// A homework file that could not run and holds no test: one error check named after it.
function brokenHomeworkFiles(run: RunTests, input: BuildInput): CheckResult[] {
  const out: CheckResult[] = [];
  for (const [file, message] of run.fileErrors) {
    if (!input.homeworkFiles.includes(file) || run.tests.some((x) => x.file === file)) continue;
    const none = { zh: "", en: "" };
    const def: CheckDef = {
      id: `homework/${file.replace(/^.*\//, "").replace(/\.test\.ts$/, "")}`,
      kind: "homework",
      weight: input.manifest.homeworkWeight,
      title: { zh: file, en: file },
      standard: none,
      deduction: none,
      hint: none,
      lesson: "",
    };
    out.push(checkResult(def, input.lang, "error", message, [], { advise: false }));
  }
  return out;
}

function fileErrorFor(def: CheckDef, manifest: LabManifest, fileErrors: Map<string, string>, ownFiles: Set<string>): string | undefined {
  const files = def.kind === "evidence" ? manifest.evidenceFiles : def.kind === "rubric" ? manifest.probeFiles : [];
  // The check's own files first (those holding its tests), then any file of its kind.
  for (const file of [...files.filter((f) => ownFiles.has(f)), ...files]) {
    const error = fileErrors.get(file);
    if (error) return error;
  }
  return undefined;
}

function testCheck(def: CheckDef, tests: FoundTest[], lang: Lang, missingWhy: string | undefined): CheckResult {
  const ran = tests.filter((x) => x.outcome.status !== "skip");
  const unfinished = ran.filter((x) => x.unfinished);
  const failed = ran.filter((x) => x.outcome.status === "fail" && !x.unfinished);
  const passed = ran.filter((x) => x.outcome.status === "pass");
  // Partial progress stays visible inside a check that did not pass.
  const passedNote = passed.length > 0 ? ` · ${t("passedAlongside", lang, { titles: passed.map((x) => titleOf(x.outcome)).join("; ") })}` : "";
  let status: CheckStatus;
  let message: string;
  if (ran.length === 0) {
    status = "error";
    message = t("noTestsForCheck", lang, { why: missingWhy ?? t("notRun", lang) });
  } else if (unfinished.length > 0) {
    // A test that never finished proves nothing either way: never ✔, never a plain fail.
    status = "error";
    message = t("unfinishedTests", lang, { count: unfinished.length, total: ran.length, titles: unfinished.map((x) => titleOf(x.outcome)).join("; ") });
    if (failed.length > 0) {
      message += ` | ${t("failedTests", lang, { failed: failed.length, total: ran.length })}: ${failed.map((x) => `${titleOf(x.outcome)} — ${x.outcome.message ?? ""}`).join(" | ")}`;
    }
    message += passedNote;
  } else if (failed.length > 0) {
    status = "fail";
    message = `${t("failedTests", lang, { failed: failed.length, total: ran.length })}: ${failed
      .map((x) => `${titleOf(x.outcome)} — ${x.outcome.message ?? ""}`)
      .join(" | ")}${passedNote}`;
  } else {
    status = "pass";
    message = t("allPassed", lang, { total: ran.length });
  }
  return checkResult(def, lang, status, message, tests.map((x) => x.outcome));
}

function orphanCheck(def: CheckDef, input: BuildInput, run: RunTests): CheckResult {
  const { lang } = input;
  const { runError } = run;
  const named = (fullName: string) => testName(run, fullName);
  const problems: string[] = [];
  for (const w of input.workspaces) {
    if (w.alive.length > 0) problems.push(t("orphanAfterClose", lang, { test: w.test ? named(w.test) : t("unknownTest", lang), pids: w.alive.join(", ") }));
  }
  for (const s of input.strays) problems.push(t("strayProcess", lang, { test: named(s.test), pid: s.pid, command: s.command }));
  for (const s of input.survivors) {
    const owner = input.workspaces.find((w) => w.pids.includes(s.pid));
    const test = owner?.test ? t("survivorTest", lang, { test: named(owner.test) }) : "";
    problems.push(t("survivorAfterRun", lang, { pid: s.pid, command: s.command, test }));
  }
  const pids = new Set(input.workspaces.flatMap((w) => w.pids));
  let status: CheckStatus = problems.length > 0 ? "fail" : "pass";
  let message = problems.length > 0 ? problems.slice(0, 6).join(" | ") : t("noOrphans", lang, { count: pids.size });
  if (status === "pass" && runError) {
    status = "error";
    message = t("noTestsForCheck", lang, { why: runError });
  }
  return checkResult(def, lang, status, message, []);
}

// A test a record names by its full name ("describe > title"), its title in the report's
// language where the lab translates it (the record keeps the English title: an identifier).
function testName(run: RunTests, fullName: string): string {
  const found = run.tests.find((x) => x.fullName === fullName)?.outcome;
  if (found?.label === undefined || !fullName.endsWith(found.title)) return fullName;
  return `${fullName.slice(0, fullName.length - found.title.length)}${titleOf(found)}`;
}

// One check's result: full score only on pass; a hint and the lesson section otherwise
// (unless `advise` is false: nothing ran, so there is nothing to advise).
function checkResult(def: CheckDef, lang: Lang, status: CheckStatus, message: string, tests: TestOutcome[], { advise = true } = {}): CheckResult {
  const result: CheckResult = {
    id: def.id,
    kind: def.kind,
    status,
    score: status === "pass" ? def.weight : 0,
    maxScore: def.weight,
    message,
    title: def.title[lang],
    standard: def.standard[lang],
    deduction: def.deduction[lang],
    tests,
  };
  if (status !== "pass" && advise) {
    result.hint = def.hint[lang];
    result.lesson = def.lesson;
  }
  return result;
}

// Every graded check of the lab, each as an error with this message (nothing could run).
export function notRunChecks(manifest: LabManifest, lang: Lang, message: string): CheckResult[] {
  return manifest.checks.map((def) => checkResult(def, lang, "error", message, [], { advise: false }));
}
