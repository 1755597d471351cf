// Before any test runs: copy the submission, refuse `.only`, type-check it, and import it
// once in a throwaway process. Each failure becomes a could-not-grade message that names
// the file and line, so a learner sees "src/mcp-client.ts:12: ..." instead of a stack dump.

import { spawn } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { t } from "./i18n.ts";
import type { Lang, LabManifest } from "./manifest.ts";
import { killGroup } from "./procs.ts";

/** Largest submission copied, in bytes; anything bigger is refused. */
export const MAX_SUBMISSION_BYTES = 20 * 1024 * 1024;
/** How long the import smoke test may take before it counts as hung, in ms. */
export const IMPORT_HANG_MS = 4_000;
/** How long the type check may take, in ms. */
export const TYPECHECK_DEADLINE_MS = 30_000;

const SKIP = new Set(["node_modules", ".git", "coverage", "dist"]);

export type Preflight = { ok: true } | { ok: false; message: string };

// Copies the submission folder (without node_modules, .git, symlinks) to `dest`.
export function copySubmission(source: string, dest: string): void {
  let bytes = 0;
  cpSync(source, dest, {
    recursive: true,
    dereference: false,
    filter: (src) => {
      const name = src.slice(src.lastIndexOf("/") + 1);
      if (SKIP.has(name)) return false;
      const st = statSync(src, { throwIfNoEntry: false });
      if (!st || st.isSymbolicLink()) return false;
      bytes += st.isFile() ? st.size : 0;
      if (bytes > MAX_SUBMISSION_BYTES) throw new Error(`submission larger than ${MAX_SUBMISSION_BYTES} bytes`);
      return true;
    },
  });
}

// Lists source files under dir (relative paths), skipping dependency folders.
export function sourceFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full, base));
    else if (/\.(c|m)?(t|j)sx?$/.test(entry.name)) out.push(relative(base, full));
  }
  return out;
}

// Finds `.only` on describe/it/test/suite anywhere in the submission's sources.
export function findOnly(dir: string): string[] {
  const hits: string[] = [];
  const pattern = /\b(describe|it|test|suite|bench)\s*\.\s*only\b|\[\s*["'`]only["'`]\s*\]/;
  for (const file of sourceFiles(dir)) {
    const lines = readFileSync(join(dir, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (pattern.test(line)) hits.push(`${file}:${i + 1}`);
    });
  }
  return hits;
}

interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  timedOut: boolean;
}

// Runs a command in its own process group with a deadline; keeps at most 64 KiB of output.
export function runBounded(cmd: string, args: string[], options: { cwd: string; deadlineMs: number; env?: NodeJS.ProcessEnv }): Promise<ChildOutcome> {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      shell: false,
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.length > 65_536) output = output.slice(-65_536);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) killGroup(child.pid);
    }, options.deadlineMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, signal: null, output: String(error), timedOut });
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      // Whatever the child left in its group goes with it.
      if (child.pid) killGroup(child.pid);
      resolvePromise({ code, signal, output, timedOut });
    });
  });
}

// Type-checks the submission copy with the project's compiler options.
export async function typecheck(root: string, gradeDir: string, copy: string, manifest: LabManifest, lang: Lang): Promise<Preflight> {
  const tsconfig = join(gradeDir, "tsconfig.json");
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(root, "tsconfig.json"),
      compilerOptions: { noEmit: true, types: ["node"], typeRoots: [join(root, "node_modules", "@types")] },
      files: [join(copy, manifest.entry)],
      include: [],
    }),
  );
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const out = await runBounded(process.execPath, [tsc, "--noEmit", "--pretty", "false", "-p", tsconfig], {
    cwd: gradeDir,
    deadlineMs: TYPECHECK_DEADLINE_MS,
  });
  if (out.code === 0 && !out.timedOut) return { ok: true };
  const errors = out.output
    .split("\n")
    .map((line) => /^(.*?)\((\d+),(\d+)\): error (TS\d+: .*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null);
  if (errors.length === 0) {
    return { ok: false, message: t("typeError", lang, { where: "", text: out.output.trim().slice(0, 400) || `tsc exit ${out.code}` }) };
  }
  const first = errors[0]!;
  const where = `${relative(copy, resolve(gradeDir, first[1]!))}:${first[2]}:${first[3]}`;
  const more = errors.length > 1 ? ` ${t("typeErrorMore", lang, { count: errors.length - 1 })}` : "";
  return { ok: false, message: t("typeError", lang, { where, text: first[4] }) + more };
}

// Imports the entry module in a child process with a deadline and checks the exports.
export async function importSmoke(root: string, gradeDir: string, copy: string, manifest: LabManifest, lang: Lang): Promise<Preflight> {
  const outFile = join(gradeDir, "import-smoke.json");
  const entry = join(copy, manifest.entry);
  const script = join(root, "grader", "child", "import-smoke.mjs");
  const tsxLoader = join(root, "node_modules", "tsx", "dist", "loader.mjs");
  const out = await runBounded(
    process.execPath,
    ["--import", pathToFileURL(tsxLoader).href, script, entry, outFile, String(IMPORT_HANG_MS), ...manifest.requiredExports],
    { cwd: root, deadlineMs: IMPORT_HANG_MS + 4_000, env: { PATH: process.env.PATH ?? "" } },
  );
  let verdict: any;
  try {
    verdict = JSON.parse(readFileSync(outFile, "utf8"));
  } catch {
    verdict = undefined;
  }
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
    const frame = (verdict.frames as Array<{ url: string; line: number }>).find((f) => f.url.includes(copy));
    const where = frame ? t("importWhere", lang, { where: `${relative(copy, frame.url.replace(/^file:\/\//, ""))}:${frame.line}` }) : "";
    return { ok: false, message: t("importHung", lang, { file, ms: IMPORT_HANG_MS, where }) };
  }
  const frame = String(verdict.stack)
    .split("\n")
    .map((line) => line.match(/\(?((?:file:\/\/)?\/[^()]+?):(\d+):(\d+)\)?$/))
    .find((m) => m && m[1]!.includes(copy));
  const where = frame ? `${relative(copy, frame[1]!.replace(/^file:\/\//, ""))}:${frame[2]}: ` : "";
  return { ok: false, message: t("importThrew", lang, { file, where, text: String(verdict.message).slice(0, 300) }) };
}
