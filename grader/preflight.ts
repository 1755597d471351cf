// The checks before the tests may load the submission, started alongside the test run: the
// type check and one import of the entry in a throwaway sandboxed process. Each failure
// becomes a could-not-grade message that names the file and line, so a learner sees
// "src/mcp-client.ts:12: ..." instead of a stack dump. `.only` is not looked for: the grader
// runs only its own fixed test files, with vitest's allowOnly off (grader/README.md).

import { statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { makeScratch, ROOT, type GradeFolders, type GradePlan } from "./grade-folders.ts";
import type { HostBundle } from "./host-bundle.ts";
import { t } from "./i18n.ts";
import type { Lang, LabManifest } from "./manifest.ts";
import { bound } from "./bounded-run.ts";
import { recordLines, violationMessage, type Violation } from "./run-records.ts";
import { startPayload, type Payload, type SandboxKind } from "./sandbox/index.ts";
import type { GradeGroup } from "./sandbox/cgroup.ts";
import { readRecordFile } from "./safe-fs.mjs";

/** How long the import smoke test may take before it counts as hung, in ms. */
export const IMPORT_HANG_MS = 4_000;
/** Safety net behind the import check's own watchdog (which names the stuck line once the
 *  process is up): the process start and tsx's loading come before its 4 s, and take seconds
 *  on a loaded machine. */
export const IMPORT_DEADLINE_MS = IMPORT_HANG_MS + 16_000;
/** How long the type check may take, in ms. */
export const TYPECHECK_DEADLINE_MS = 30_000;

export type Preflight = { ok: true } | { ok: false; message: string };

/** The checks before running, under way: the gate of the tests, the run's stop, the outcome. */
export interface PreflightRun {
  /** Resolves true once the tests may load the submission (the import check passed). */
  gate: Promise<boolean>;
  /** Aborted when a check failed: the test run is no longer wanted. */
  stop: AbortSignal;
  done: Promise<{ verdict: Preflight; smoke: SmokeOutcome }>;
}

// Stage 3: the type check and the import check, alongside the tests. On this kind of machine
// that saves most of a second, and a failed check simply stops the run.
export function startPreflight(plan: GradePlan, folders: GradeFolders, bundle: Promise<HostBundle | undefined>): PreflightRun {
  const { lang, manifest, started, phases } = plan;
  const timed = <T>(name: string, work: Promise<T>): Promise<T> =>
    work.then((value) => {
      phases[name] = Date.now() - started;
      return value;
    });
  const { copy, gradeDir, sandbox, confine, group } = folders;
  const context: SmokeContext = { root: ROOT, copy, manifest, lang, sandbox, hide: plan.hide, gradeDir, scratch: folders.smokeScratch, confine, ...(group ? { group } : {}) };
  const smoke = timed("importCheckEndMs", gradeSmoke(context, bundle, () => makeScratch(join(gradeDir, "import-tsx"))));
  const types = timed("typecheckEndMs", typecheck({ ...context, scratch: makeScratch(join(gradeDir, "typecheck")) }));
  const stopRun = new AbortController();
  const done = Promise.all([types, smoke]).then(([typed, s]) => {
    // An import refused by the confinement (or a record it could not trust) wins over a type error.
    const verdict = s.refused || typed.ok ? s.verdict : typed;
    if (!verdict.ok) stopRun.abort();
    return { verdict, smoke: s };
  });
  return { gate: smoke.then((s) => s.verdict.ok, () => false), stop: stopRun.signal, done };
}

// Writes a tsconfig that checks one entry file (and what it imports) with the project's
// compiler options; returns its path.
export function writeTypecheckConfig(file: string, root: string, entry: string): string {
  const config = {
    extends: join(root, "tsconfig.json"),
    compilerOptions: { noEmit: true, types: ["node"], typeRoots: [join(root, "node_modules", "@types")] },
    files: [entry],
    include: [],
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

// The compiler's command: typescript@7's native binary itself where its platform package is
// installed (what typescript/bin/tsc would exec, without starting Node first: about 60 ms of a
// grade's critical path), else that launcher through this Node.
export function compilerCommand(root: string): string[] {
  const native = join(root, "node_modules", "@typescript", `typescript-${process.platform}-${process.arch}`, "lib", process.platform === "win32" ? "tsc.exe" : "tsc");
  try {
    if (statSync(native).isFile()) return [native];
  } catch {
    // not installed for this platform: the launcher finds what it can
  }
  return [process.execPath, join(root, "node_modules", "typescript", "bin", "tsc")];
}

/** Characters of the compiler's output kept: its first errors are the ones reported. */
const TYPECHECK_OUTPUT_CHARS = 64 * 1024;

// Type-checks the submission copy with the project's compiler options, in the sandbox as the
// import check is (where the machine has one): the compiler follows whatever the copy's imports
// name, and outside the sandbox it would read, as the grader, any file the grader can, and
// print a piece of it (a literal type, an export's name) in its first error. Inside, the
// project's hidden paths (the reference solution) are not there, the rest is read-only, and
// its memory and CPU are capped as a payload's are.
export async function typecheck(context: SmokeContext): Promise<Preflight> {
  const { root, gradeDir, copy, manifest, lang } = context;
  const tsconfig = writeTypecheckConfig(join(gradeDir, "tsconfig.json"), root, join(copy, manifest.entry));
  const payload = startPayload({
    command: [...compilerCommand(root), "--noEmit", "--pretty", "false", "-p", tsconfig],
    cwd: gradeDir,
    env: { PATH: process.env.PATH ?? "", HOME: context.scratch },
    input: "",
    sandbox: context.sandbox,
    root,
    hide: context.hide,
    gradeDir,
    scratch: context.scratch,
    cpuSeconds: Math.ceil(TYPECHECK_DEADLINE_MS / 1000) + 5,
    childWorkers: false,
    group: context.group,
  });
  payload.stdin.end();
  // The head of what it prints (the first error), not the tail bound() keeps.
  let output = "";
  payload.child.stdout?.setEncoding("utf8");
  payload.child.stdout?.on("data", (chunk: string) => {
    if (output.length < TYPECHECK_OUTPUT_CHARS) output += chunk;
  });
  const out = await bound(payload.child, { deadlineMs: TYPECHECK_DEADLINE_MS, tailBytes: 0 });
  payload.channel.destroy();
  const report = await payload.report;
  if (report?.setupError) return { ok: false, message: t("sandboxFailed", lang, { why: report.setupError.split("\n")[0]! }) };
  if (out.timedOut) return { ok: false, message: t("typecheckTimedOut", lang, { seconds: TYPECHECK_DEADLINE_MS / 1000 }) };
  // In the sandbox the compiler's exit is in ns-init's report (the launcher's own is not it).
  const { code, signal } = report ? (report.exit ?? { code: null, signal: "lost" }) : out;
  if (code === 0) return { ok: true };
  const errors = output
    .split("\n")
    .map((line) => /^(.*?)\((\d+),(\d+)\): error (TS\d+: .*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null);
  if (errors.length === 0) {
    // (A compiler that could not be started at all says why, as the command's own error.)
    const why = out.error ? String(out.error) : signal ? `tsc ${signal}` : `tsc exit ${code}`;
    return { ok: false, message: t("typeError", lang, { where: "", text: output.trim().slice(0, 400) || why }) };
  }
  const first = errors[0]!;
  const where = `${relative(copy, resolve(gradeDir, first[1]!))}:${first[2]}:${first[3]}`;
  const more = errors.length > 1 ? ` ${t("typeErrorMore", lang, { count: errors.length - 1 })}` : "";
  return { ok: false, message: t("typeError", lang, { where, text: first[4] }) + more };
}

export interface SmokeContext {
  root: string;
  copy: string;
  manifest: LabManifest;
  lang: Lang;
  sandbox: SandboxKind;
  hide: string[];
  gradeDir: string;
  /** Writable folder of its own (the test run has another). */
  scratch: string;
  /** The resolution policy ($LAB_CONFINE). */
  confine: string;
  /** The submission's host bundle, imported in place of the entry (see gradeSmoke). */
  bundle?: string;
  /** The grade's control group (sandbox/cgroup.ts), where it has one. */
  group?: GradeGroup;
}

export interface SmokeOutcome {
  verdict: Preflight;
  /** The import confinement refused an import (this verdict then wins over a type error). */
  refused?: boolean;
  /** Processes alive in the sandbox when the import check ended (sandbox only). */
  leftovers: Array<{ pid: number; command: string }>;
  /** The sandbox could not be set up (ns-init's report). */
  setupError?: string;
  /** The import was still running at its deadline. */
  hung?: boolean;
}

// A grade's import check. It imports the submission's host bundle (grader/host-bundle.ts: the
// very file every client host loads, built anyway) with plain node, which costs about a third
// of the CPU of compiling the submission through tsx's loader. Any verdict but "loaded" or
// "hung" is taken again through tsx, in a scratch folder of its own, and that is the verdict
// reported: the file and line of an import as the learner wrote it (a bundle holds them only
// through its source map), word for word as the check always said. A hang is not taken again
// (it would cost the hang's whole wait twice): its place comes from the bundle's source map.
// Without a bundle (one that could not be built: a syntax error, say) the check runs through
// tsx at once.
async function gradeSmoke(context: SmokeContext, bundle: Promise<HostBundle | undefined>, tsxScratch: () => string): Promise<SmokeOutcome> {
  const built = await bundle.catch(() => undefined);
  if (!built) return importSmoke(context);
  const first = await importSmoke({ ...context, bundle: built.submission });
  if (first.verdict.ok || first.setupError || first.hung) return first;
  const again = await importSmoke({ ...context, scratch: tsxScratch() });
  return { ...again, leftovers: [...first.leftovers, ...again.leftovers] };
}

// Imports the entry module in a child process (sandboxed where possible) with a deadline,
// under the strict resolution guard, and checks the exports: the TypeScript entry through
// tsx, or the submission's bundle (`context.bundle`) with plain node and its source map.
export async function importSmoke(context: SmokeContext): Promise<SmokeOutcome> {
  const { copy, manifest, lang } = context;
  const script = join(context.root, "grader", "child", "import-smoke.mjs");
  const tsxLoader = join(context.root, "node_modules", "tsx", "dist", "loader.mjs");
  const violationLog = join(context.scratch, "violations.jsonl");
  const loader = context.bundle ? ["--enable-source-maps"] : ["--import", pathToFileURL(tsxLoader).href];
  const payload = startPayload({
    command: [process.execPath, "--max-old-space-size=512", ...loader, script, context.bundle ?? join(copy, manifest.entry), String(IMPORT_HANG_MS), ...manifest.requiredExports],
    cwd: context.scratch,
    env: { PATH: process.env.PATH ?? "", HOME: context.scratch, LAB_CONFINE: context.confine, LAB_CONFINE_STRICT: "1", LAB_VIOLATION_LOG: violationLog },
    input: "",
    sandbox: context.sandbox,
    root: context.root,
    hide: context.hide,
    gradeDir: context.gradeDir,
    scratch: context.scratch,
    cpuSeconds: Math.ceil(IMPORT_DEADLINE_MS / 1000) + 5,
    records: ["violations.jsonl"],
    // The submission is loaded in the payload itself: none of its children is a vitest worker.
    childWorkers: false,
    group: context.group,
  });
  payload.stdin.end();
  const out = await boundedPayload(payload, IMPORT_DEADLINE_MS);
  const report = await payload.report;
  const leftovers = report?.alive ?? [];
  if (report?.setupError) {
    const why = report.setupError.split("\n")[0]!;
    return { verdict: { ok: false, message: t("sandboxFailed", lang, { why }) }, leftovers, setupError: why };
  }
  // The violation log, read without trusting it: in the sandbox by ns-init, else here.
  const log = context.sandbox === "none" ? readRecordFile(violationLog) : report?.records?.["violations.jsonl"];
  const violations = recordLines<Violation>("violations.jsonl", log, lang, out.timedOut);
  if ("problem" in violations) return { verdict: { ok: false, message: violations.problem }, refused: true, leftovers };
  if (violations.lines.length > 0) return { verdict: { ok: false, message: violationMessage(violations.lines, lang) }, refused: true, leftovers };
  const verdict = smokeVerdict(out, context);
  const hung = !verdict.ok && (out.timedOut || out.verdict?.kind === "hung");
  return { verdict, leftovers, ...(hung ? { hung } : {}), ...(!verdict.ok && /outside|之外/.test(verdict.message) ? { refused: true } : {}) };
}

interface PayloadOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The last JSON line the payload wrote to fd 3. */
  verdict: any;
}

// Waits for a payload with a deadline (then kills its group); reads the last JSON line it
// wrote to fd 3, its verdict.
async function boundedPayload(payload: Payload, deadlineMs: number): Promise<PayloadOutcome> {
  let text = "";
  payload.channel.setEncoding("utf8");
  payload.channel.on("data", (chunk: string) => {
    if (text.length < 1_000_000) text += chunk;
  });
  const { code, signal, timedOut } = await bound(payload.child, { deadlineMs, tailBytes: 0 });
  // The verdict may still be in flight: wait for the channel's write ends to close
  // (at once in the sandbox, whose processes are all gone; bounded without it).
  const closed = new Promise<void>((r) => {
    if (payload.channel.closed) r();
    payload.channel.once("close", () => r());
  });
  await Promise.race([closed, new Promise((r) => setTimeout(r, 500).unref())]);
  payload.channel.destroy();
  return { code, signal, timedOut, verdict: lastJsonLine(text) };
}

function lastJsonLine(text: string): any {
  let verdict: any;
  for (const line of text.split("\n")) {
    try {
      if (line.trim()) verdict = JSON.parse(line);
    } catch {
      // not a verdict line
    }
  }
  return verdict;
}

function smokeVerdict(out: PayloadOutcome, context: SmokeContext): Preflight {
  const { copy, manifest, lang } = context;
  const verdict = out.verdict;
  const file = manifest.entry;
  if (!verdict) {
    return { ok: false, message: t("importHung", lang, { file, ms: IMPORT_HANG_MS, where: out.timedOut ? "" : ` (exit ${out.code ?? out.signal})` }) };
  }
  if (verdict.ok) {
    for (const name of manifest.requiredExports) {
      const kind = verdict.exports?.[name];
      if (kind === "missing") return { ok: false, message: t("missingExport", lang, { file, name }) };
      const want = manifest.exportKinds?.[name] ?? "class";
      if (kind !== want) return { ok: false, message: t(want === "class" ? "notAClass" : "notAFunction", lang, { file, name }) };
    }
    return { ok: true };
  }
  if (verdict.kind === "hung") {
    const frame = ((verdict.frames ?? []) as Array<{ url: string; line: number }>).find((f) => String(f.url).includes(copy));
    const where = frame ? t("importWhere", lang, { where: `${relative(copy, String(frame.url).replace(/^file:\/\//, ""))}:${frame.line}` }) : "";
    return { ok: false, message: t("importHung", lang, { file, ms: IMPORT_HANG_MS, where }) };
  }
  if (/imports outside the submission/.test(String(verdict.message))) {
    const m = /imports outside the submission: (.*?) \((.*)\)$/.exec(String(verdict.message));
    return { ok: false, message: violationMessage([{ where: m?.[1] ?? file, spec: m?.[2] ?? "?" }], lang) };
  }
  const frame = String(verdict.stack)
    .split("\n")
    .map((line) => line.match(/\(?((?:file:\/\/)?\/[^()]+?):(\d+):(\d+)\)?$/))
    .find((m) => m && m[1]!.includes(copy));
  const where = frame ? `${relative(copy, frame[1]!.replace(/^file:\/\//, ""))}:${frame[2]}: ` : "";
  return { ok: false, message: t("importThrew", lang, { file, where, text: String(verdict.message).slice(0, 300) }) };
}
