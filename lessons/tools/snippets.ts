// Code excerpts in a lesson come from real files. A lesson marks each excerpt with
//   <!-- snippet: path/to/file.ts#region-name -->
// followed by a fenced code block; the source file wraps the excerpt in
//   // #region lesson:region-name   ...   // #endregion lesson:region-name
// `check` reports every excerpt that drifted from its source; `--write` refreshes them.
//
//   npx tsx lessons/tools/snippets.ts [--write] [lesson.md ...]

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const MARKER = /^<!--\s*snippet:\s*([^#\s]+)#([\w-]+)\s*-->\s*$/;

export interface SnippetRef {
  file: string;
  region: string;
  /** 1-based line of the marker in the lesson. */
  line: number;
  /** Index (0-based) of the opening fence line, and of the closing one. */
  open: number;
  close: number;
  /** The code between the fences, as the lesson has it. */
  body: string;
}

// Finds every marked excerpt. A marker must be followed (blank lines allowed) by a fence.
export function findSnippets(markdown: string): { refs: SnippetRef[]; problems: string[] } {
  const lines = markdown.split("\n");
  const refs: SnippetRef[] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = MARKER.exec(lines[i]!);
    if (!match) continue;
    let open = i + 1;
    while (open < lines.length && lines[open]!.trim() === "") open++;
    if (!lines[open]?.startsWith("```")) {
      problems.push(`line ${i + 1}: snippet marker for ${match[1]}#${match[2]} is not followed by a code block`);
      continue;
    }
    let close = open + 1;
    while (close < lines.length && !lines[close]!.startsWith("```")) close++;
    if (close >= lines.length) {
      problems.push(`line ${open + 1}: unterminated code block`);
      continue;
    }
    refs.push({ file: match[1]!, region: match[2]!, line: i + 1, open, close, body: lines.slice(open + 1, close).join("\n") });
    i = close;
  }
  return { refs, problems };
}

// The region's lines without the markers (and without nested lesson markers), dedented.
export function readRegion(file: string, region: string, root = ROOT): string {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const start = lines.findIndex((l) => l.trim() === `// #region lesson:${region}`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === `// #endregion lesson:${region}`);
  if (start === -1 || end === -1) throw new Error(`${file} has no region lesson:${region}`);
  const body = lines.slice(start + 1, end).filter((l) => !/^\s*\/\/ #(end)?region lesson:/.test(l));
  const indent = Math.min(...body.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length));
  return body.map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join("\n");
}

export interface SnippetProblem {
  ref?: SnippetRef;
  message: string;
}

// Every excerpt of a lesson compared with its region.
export function checkSnippets(lessonPath: string, root = ROOT): { count: number; problems: SnippetProblem[] } {
  const { refs, problems } = findSnippets(readFileSync(lessonPath, "utf8"));
  const out: SnippetProblem[] = problems.map((message) => ({ message }));
  for (const ref of refs) {
    let source: string;
    try {
      source = readRegion(ref.file, ref.region, root);
    } catch (error) {
      out.push({ ref, message: `line ${ref.line}: ${(error as Error).message}` });
      continue;
    }
    if (source !== ref.body) out.push({ ref, message: `line ${ref.line}: excerpt ${ref.file}#${ref.region} differs from the source` });
  }
  return { count: refs.length, problems: out };
}

// Rewrites every excerpt from its region; returns how many changed.
export function writeSnippets(lessonPath: string, root = ROOT): number {
  const lines = readFileSync(lessonPath, "utf8").split("\n");
  const { refs } = findSnippets(lines.join("\n"));
  let changed = 0;
  for (const ref of [...refs].reverse()) {
    const source = readRegion(ref.file, ref.region, root);
    if (source === ref.body) continue;
    lines.splice(ref.open + 1, ref.close - ref.open - 1, ...source.split("\n"));
    changed++;
  }
  if (changed > 0) writeFileSync(lessonPath, lines.join("\n"));
  return changed;
}

/** The lessons whose excerpts are checked by default. */
export const DEFAULT_LESSONS = ["lessons/33-mcp-lite/README.md", "lessons/33-mcp-lite/README.en.md"];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const write = args.includes("--write");
  const files = args.filter((a) => a !== "--write");
  let failed = false;
  for (const file of files.length > 0 ? files : DEFAULT_LESSONS) {
    const path = resolve(ROOT, file);
    try {
      readFileSync(path);
    } catch {
      if (files.length > 0) {
        console.error(`${file}: not found`);
        failed = true;
      }
      continue;
    }
    if (write) console.log(`${file}: ${writeSnippets(path)} excerpt(s) refreshed`);
    const { count, problems } = checkSnippets(path);
    for (const p of problems) console.error(`${file}: ${p.message}`);
    console.log(`${file}: ${count} excerpt(s), ${problems.length} problem(s)`);
    failed ||= problems.length > 0;
  }
  process.exitCode = failed ? 1 : 0;
}
