// The lesson's code comes from the real files: every excerpt equals its region, and the
// checker really notices drift (tested on a copy, so the real files are never touched).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkSnippets, findSnippets, readRegion, ROOT, writeSnippets } from "../../lessons/tools/snippets.ts";

const LESSON = join(ROOT, "lessons", "33-mcp-lite", "README.md");
const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sandbox(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "lab33-lesson-"));
  temps.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe("lesson excerpts", () => {
  it("match the regions of the solution files they quote, every one of them", () => {
    const { count, problems } = checkSnippets(LESSON);
    expect(problems.map((p) => p.message)).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(12);
  });

  it("in the English companion match their sources too", () => {
    const { count, problems } = checkSnippets(join(ROOT, "lessons", "33-mcp-lite", "README.en.md"));
    expect(problems.map((p) => p.message)).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(1);
  });

  it("in lesson 13 (both languages) match the regions of its reference runner", () => {
    for (const name of ["README.md", "README.en.md"]) {
      const { count, problems } = checkSnippets(join(ROOT, "lessons", "13-process-boundary", name));
      expect(problems.map((p) => p.message), name).toEqual([]);
      expect(count, name).toBe(4);
    }
  });

  it("quote the pending record, settle, request order, exit, close, spawn and framing code", () => {
    const { refs } = findSnippets(readFileSync(LESSON, "utf8"));
    const quoted = refs.map((r) => r.region);
    for (const region of ["pending-record", "pending-settle", "pending-open", "request", "on-exit", "close", "stop-ladder", "spawn", "env-allowlist", "line-decoder-push"]) {
      expect(quoted).toContain(region);
    }
    expect(refs.filter((r) => r.file.startsWith("labs/33-mcp-lite/solution/src/")).length).toBeGreaterThanOrEqual(10);
  });
});

describe("the excerpt checker", () => {
  const source = ["export function f() {", "  // #region lesson:body", "  const a = 1;", "  return a;", "  // #endregion lesson:body", "}"].join("\n");
  const lesson = (code: string) => ["# t", "<!-- snippet: src/f.ts#body -->", "```ts", code, "```", ""].join("\n");

  it("reads a region dedented and without its markers", () => {
    const dir = sandbox({ "src/f.ts": source });
    expect(readRegion("src/f.ts", "body", dir)).toBe("const a = 1;\nreturn a;");
  });

  it("reports an excerpt that drifted from its source, and --write repairs it", () => {
    const dir = sandbox({ "src/f.ts": source, "l.md": lesson("const a = 2;\nreturn a;") });
    const before = checkSnippets(join(dir, "l.md"), dir);
    expect(before.problems).toHaveLength(1);
    expect(before.problems[0]!.message).toContain("src/f.ts#body differs");
    expect(writeSnippets(join(dir, "l.md"), dir)).toBe(1);
    expect(checkSnippets(join(dir, "l.md"), dir).problems).toEqual([]);
  });

  it("reports an excerpt whose region no longer exists", () => {
    const dir = sandbox({ "src/f.ts": "export const x = 1;\n", "l.md": lesson("anything") });
    expect(checkSnippets(join(dir, "l.md"), dir).problems[0]!.message).toContain("has no region lesson:body");
  });
});
