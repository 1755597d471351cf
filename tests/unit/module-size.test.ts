// Size limits of the reference client, so it stays readable at a glance: no module over
// ~300 lines, no function or method over ~50. Functions are found by their layout (the
// code is formatted: a body closes with "}" at the indentation its header opened at).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "labs", "33-mcp-lite", "solution", "src");
const MAX_MODULE_LINES = 310;
const MAX_FUNCTION_LINES = 50;

// A line that opens a function or method body: `function f(…) {`, `async m(…): T {`,
// `get x(): T {`, `constructor(…) {`, or an arrow assigned to a name `const f = (…) => {`.
const HEADER =
  /^\s*(?:export\s+)?(?:(?:async\s+)?function\s*\*?\s*\w+|(?:(?:private|protected|public|static|readonly|async|get|set)\s+)*\w+\s*(?:<[^>]*>)?\(|(?:const|let)\s+\w+\s*=\s*(?:async\s+)?\()/;
const CONTROL = /^\s*(?:if|for|while|switch|catch|return|else)\b/;

function functionLengths(text: string): Array<{ name: string; line: number; lines: number }> {
  const lines = text.split("\n");
  const found: Array<{ name: string; line: number; lines: number }> = [];
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

describe("the reference client's size limits", () => {
  const modules = readdirSync(SRC).filter((f) => f.endsWith(".ts"));

  it("finds the functions it measures (the checker itself works)", () => {
    const sample = ["export function f(a: number): number {", "  if (a) {", "    return 1;", "  }", "  return 2;", "}"].join("\n");
    expect(functionLengths(sample)).toEqual([{ name: "export function f(a: number): number {", line: 1, lines: 6 }]);
    const method = ["class C {", "  private async run(", "    x: string,", "  ): Promise<void> {", "    await x;", "  }", "}"].join("\n");
    expect(functionLengths(method).map((f) => f.lines)).toContain(5);
    expect(functionLengths(readFileSync(join(SRC, "mcp-client.ts"), "utf8")).length).toBeGreaterThan(20);
  });

  it.each(readdirSync(SRC).filter((f) => f.endsWith(".ts")))("%s has at most ~300 lines", (module) => {
    expect(readFileSync(join(SRC, module), "utf8").split("\n").length).toBeLessThanOrEqual(MAX_MODULE_LINES);
  });

  it("has no function or method over ~50 lines", () => {
    const long = modules.flatMap((module) =>
      functionLengths(readFileSync(join(SRC, module), "utf8"))
        .filter((f) => f.lines > MAX_FUNCTION_LINES && !f.name.startsWith("class"))
        .map((f) => `${module}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(long).toEqual([]);
  });
});
