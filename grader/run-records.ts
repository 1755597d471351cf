// Stage 5 of a grade: what the run left behind, read back without trusting it. The result
// channel's records as vitest's results; the JSON-lines logs the fixtures, the setup file and
// the confinement wrote (in the sandbox as ns-init read them from its tmpfs, else read here:
// never through a link, never blocking, regular files of bounded size, see safe-fs.mjs);
// the processes still alive; and why the run cannot be graded at all, when it cannot.

import { join } from "node:path";
import { TOKEN_ENV, type GradeFolders, type GradePlan } from "./grade-folders.ts";
import { KIND_WORD } from "./copy-submission.ts";
import { t } from "./i18n.ts";
import type { Lang } from "./manifest.ts";
import { commandLine, isPidAlive, killAndWait, withCwdUnder, withEnvToken } from "./procs.ts";
import type { VitestRun } from "./run-vitest.ts";
import { readRecordFile, subfolders, type RecordRead } from "./safe-fs.mjs";
import type { BuildInput, ProgressRecord, StrayRecord, VitestJson, WorkspaceRecord } from "./test-records.ts";

/** Largest pid file read back, in bytes. */
const PID_FILE_MAX_BYTES = 64 * 1024;

export interface Violation {
  where: string;
  spec: string;
}

/** What the checks before running found (preflight.ts), as far as the records need it. */
export interface PreflightFound {
  verdict: { ok: true } | { ok: false; message: string };
  smoke: { leftovers: Array<{ pid: number; command: string }>; setupError?: string };
}

/** The run read back: what the checks are built from, or why it cannot be graded. */
export type RunRecords = { input: BuildInput } | { refusal: string; setupError?: string };

// Reads back everything the run left and says whether it can be graded.
export async function collectRunRecords(plan: GradePlan, folders: GradeFolders, run: VitestRun, preflight: PreflightFound): Promise<RunRecords> {
  const { lang } = plan;
  const survivors = await leftoverProcesses(run, folders);
  const setupError = preflight.smoke.setupError ?? run.sandboxError?.split("\n")[0];
  if (setupError) return { refusal: t("sandboxFailed", lang, { why: setupError }), setupError };
  if (!preflight.verdict.ok) return { refusal: preflight.verdict.message };
  if (run.tampered) return { refusal: t("channelTampered", lang, { why: run.tampered }) };
  const read = (name: string) => (folders.sandbox === "none" ? readRecordFile(join(folders.scratch, name)) : run.scratchRecords?.[name]);
  // A run stopped at the deadline or by a failed check loses the sandbox's report with it.
  const stopped = run.timedOut || run.code === null;
  // What the tests left behind came with their results over the signed channel (child/setup.ts);
  // only the confinement's refusals, written where the refused code runs, are a file.
  const violations = recordLines<Violation>("violations.jsonl", read("violations.jsonl"), lang, stopped);
  if ("problem" in violations) return { refusal: violations.problem };
  const seen = [...run.records.filter((r) => r.event === "violation").map((r) => ({ where: String(r.where), spec: String(r.spec) })), ...(violations as { lines: Violation[] }).lines];
  if (seen.length > 0) return { refusal: violationMessage(seen, lang) };
  const smokeLeft = preflight.smoke.leftovers.map((p) => ({ pid: p.pid, command: `${p.command} [${t("importCheckTag", lang)}]` }));
  return {
    input: {
      manifest: plan.manifest,
      lang,
      labDir: plan.labDir,
      json: resultsFromRecords(run.records),
      run,
      progress: run.records.filter((r) => r.event === "start" || r.event === "end" || r.event === "unhandled") as unknown as ProgressRecord[],
      workspaces: leftoverRecords<WorkspaceRecord>(run.records, "workspaces"),
      strays: leftoverRecords<StrayRecord>(run.records, "strays"),
      survivors: [...survivors, ...smokeLeft],
      deadlineMs: plan.deadlineMs,
      homeworkFiles: plan.homework,
      testFiles: plan.files,
    },
  };
}

// A JSON-lines record as parsed objects (torn lines from a killed writer skipped), or the
// could-not-grade message when it cannot be trusted. `read` undefined: the sandbox sent no
// report, fine only for a run that was stopped (its report went with it).
export function recordLines<T>(name: string, read: RecordRead | undefined, lang: Lang, stopped: boolean): { lines: T[] } | { problem: string } {
  if (!read) return stopped ? { lines: [] } : { problem: t("sandboxReportMissing", lang) };
  if (!read.ok) return { problem: recordProblem(name, read, lang) };
  const lines: T[] = [];
  for (const line of read.text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (value !== null && typeof value === "object" && !Array.isArray(value)) lines.push(value as T);
    } catch {
      // A torn line from a killed writer.
    }
  }
  if (name === "violations.jsonl") return { lines: lines.filter((v) => typeof (v as Violation).where === "string" && typeof (v as Violation).spec === "string") };
  return { lines };
}

// Why a record file cannot be trusted, in the learner's language.
function recordProblem(name: string, read: Extract<RecordRead, { ok: false }>, lang: Lang): string {
  if (read.refusal === "too-big") return t("recordTooBig", lang, { file: name, max: read.detail ?? "" });
  if (read.refusal === "unreadable") return t("recordUnreadable", lang, { file: name, why: read.detail ?? "" });
  return t("recordUntrusted", lang, { file: name, what: t(KIND_WORD[read.refusal], lang) });
}

// The could-not-grade message for imports the confinement refused.
export function violationMessage(violations: Violation[], lang: Lang): string {
  const list = violations.slice(0, 3).map((v) => `${v.where} (${v.spec})`).join(", ");
  return t("importsOutside", lang, { where: list });
}

// vitest's results, rebuilt from the channel's "file" records (undefined unless the run
// reached its end: "done").
export function resultsFromRecords(records: Array<Record<string, unknown>>): VitestJson | undefined {
  if (!records.some((r) => r.event === "done")) return undefined;
  const status = (state: unknown) => (state === "passed" ? "passed" : state === "failed" ? "failed" : state === "skipped" ? "skipped" : "pending");
  const testResults = records
    .filter((r) => r.event === "file")
    .map((r) => {
      const tests = (r.tests as Array<{ ancestors: string[]; title: string; state: string; duration: number | null; errors: string[] }>) ?? [];
      const errors = (r.errors as string[]) ?? [];
      return {
        name: String(r.file),
        // "pending" after the run ended: the file's worker died before finishing it.
        status: r.state === "passed" ? "passed" : r.state === "failed" || r.state === "skipped" ? "failed" : "crashed",
        message: errors[0] ?? "",
        assertionResults: tests.map((x) => ({
          ancestorTitles: x.ancestors,
          title: x.title,
          fullName: [...x.ancestors, x.title].join(" "),
          status: status(x.state) as VitestJson["testResults"][number]["assertionResults"][number]["status"],
          duration: x.duration,
          failureMessages: x.errors,
        })),
      };
    });
  return { numTotalTests: testResults.reduce((n, f) => n + f.assertionResults.length, 0), success: testResults.every((f) => f.status === "passed"), testResults };
}

// Pids in every pid file left under the fixture root (workspaces whose cleanup never ran),
// each folder found with lstat and each file read without trusting it.
export function recordedPids(fixtureRoot: string): number[] {
  const pids: number[] = [];
  for (const dir of subfolders(fixtureRoot)) {
    const read = readRecordFile(join(dir, "pids.txt"), PID_FILE_MAX_BYTES);
    if (!read.ok) continue;
    for (const line of read.text.split("\n")) {
      const pid = Number(line.trim());
      if (Number.isInteger(pid) && pid > 1) pids.push(pid);
    }
  }
  return pids;
}

// Leftovers: what outlived vitest (in the sandbox: what ns-init saw alive; the kernel kills the
// rest of the namespace with it, and when the run was stopped at the deadline it may still be
// doing so: what carries the grade's token is waited for, not counted). Without a sandbox also
// anything carrying the grade's token or running in the grade's directory, and any pid a
// fixture recorded that is still alive; those are killed (never the grader or its parent).
async function leftoverProcesses(run: VitestRun, folders: GradeFolders): Promise<Array<{ pid: number; command: string }>> {
  const { token } = folders;
  const survivors = new Map<number, string>();
  for (const p of run.leftovers) survivors.set(p.pid, p.command ?? commandLine(p.pid));
  if (folders.sandbox === "none") {
    for (const p of withEnvToken(TOKEN_ENV, token)) survivors.set(p.pid, commandLine(p.pid));
    for (const p of withCwdUnder(folders.runCwd)) survivors.set(p.pid, commandLine(p.pid));
    for (const pid of recordedPids(folders.fixtureRoot)) if (isPidAlive(pid)) survivors.set(pid, commandLine(pid));
    survivors.delete(process.pid);
    survivors.delete(process.ppid);
    await killAndWait([...survivors.keys()]);
  } else {
    await killAndWait(withEnvToken(TOKEN_ENV, token).map((p) => p.pid));
  }
  return [...survivors].map(([pid, command]) => ({ pid: Number(pid), command }));
}

// What the tests left behind (kind "workspaces" or "strays"), from the channel's "end" records:
// the worker's setup file put them in each test's result (child/setup.ts).
export function leftoverRecords<T>(records: Array<Record<string, unknown>>, kind: string): T[] {
  const out: T[] = [];
  for (const r of records) {
    if (r.event !== "end" || !Array.isArray(r.leftovers)) continue;
    for (const item of r.leftovers as Array<{ kind?: unknown; record?: unknown }>) {
      if (item && item.kind === kind && item.record && typeof item.record === "object") out.push(item.record as T);
    }
  }
  return out;
}
