// Size limits shared by the tests that hold them (tests/unit/module-size.test.ts for the
// reference client, tests/grader/module-size.test.ts for the grader): no module over ~300
// lines, no function or method over ~50. Functions are found by their layout (the code is
// formatted: a body closes with "}" at the indentation its header opened at).

import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every source module under `dir` (TypeScript and plain-Node .mjs), as absolute paths. */
export function sourceModules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sourceModules(full);
    return /\.(ts|mjs)$/.test(entry.name) ? [full] : [];
  });
}

export const MAX_MODULE_LINES = 310;
export const MAX_FUNCTION_LINES = 50;

// A line that opens a function or method body: `function f(…) {`, `async m(…): T {`,
// `get x(): T {`, `constructor(…) {`, or an arrow assigned to a name `const f = (…) => {`.
const HEADER =
  /^\s*(?:export\s+)?(?:(?:async\s+)?function\s*\*?\s*\w+|(?:(?:private|protected|public|static|readonly|async|get|set)\s+)*\w+\s*(?:<[^>]*>)?\(|(?:const|let)\s+\w+\s*=\s*(?:async\s+)?\()/;
const CONTROL = /^\s*(?:if|for|while|switch|catch|return|else)\b/;

export interface FunctionLength {
  name: string;
  line: number;
  lines: number;
}

// Every function or method body in a module's text, with its length in lines.
export function functionLengths(text: string): FunctionLength[] {
  const lines = text.split("\n");
  const found: FunctionLength[] = [];
  lines.forEach((line, index) => {
    if (!HEADER.test(line) || CONTROL.test(line)) return;
    // The header may wrap: find the line that opens the body at the header's indentation.
    const indent = line.length - line.trimStart().length;
    let open = index;
    while (open < lines.length && !lines[open]!.trimEnd().endsWith("{") && !lines[open]!.trimEnd().endsWith(";")) open += 1;
    // A statement (a call, a signature in an interface) ends with ";" before any body opens.
    if (open - index > 8 || !lines[open]?.trimEnd().endsWith("{")) return;
    const close = lines.findIndex((l, i) => i > open && l.length - l.trimStart().length === indent && l.trimStart().startsWith("}"));
    if (close === -1) return;
    found.push({ name: line.trim().slice(0, 60), line: index + 1, lines: close - index + 1 });
  });
  return found;
}

// "file:line name (N lines)" for every function of `text` over the limit (classes excepted:
// a class is measured by its methods).
export function longFunctions(file: string, text: string): string[] {
  return functionLengths(text)
    .filter((f) => f.lines > MAX_FUNCTION_LINES && !f.name.startsWith("class"))
    .map((f) => `${file}:${f.line} ${f.name} (${f.lines} lines)`);
}
