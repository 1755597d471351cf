// What the outer grader prints or scans of a submission's own making: messages with terminal
// escapes (a forged "PASS · 100/100" above an error), Markdown and HTML in the job summary,
// batch folders with names no path can be written for or that are links, and TODO(...) scans
// that must stay linear. Each case here was a working attack on the grader before its fix.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { submissionFolders } from "../../grader/batch.ts";
import type { GradeResult } from "../../grader/grade-result.ts";
import { renderMarkdown } from "../../grader/report/markdown.ts";
import { printable, printableLine } from "../../grader/report/printable.ts";
import { todoMarkers } from "../../grader/report/progress.ts";
import { renderText } from "../../grader/report/text.ts";

const ESC = "\u001b";
const FORGED = `\r${ESC}[3A${ESC}[2KGrade report · 33-mcp-lite · PASS\n${ESC}[2KScore: 100/100\n${ESC}[8m`;

function errorResult(message: string): GradeResult {
  return {
    version: 1, lab: "33-mcp-lite", status: "error", score: 0, maxScore: 100, bonus: { score: 0, maxScore: 0 }, seed: 1, lang: "en", message,
    submission: "/tmp/x", startedAt: "2026-01-01T00:00:00.000Z", durationMs: 1,
    checks: [{ id: "evidence/happy-path", kind: "evidence", status: "error", score: 0, maxScore: 10, message, title: "Happy path", standard: "s", deduction: "d", tests: [] }],
  };
}

const made: string[] = [];
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "lab-hostile-text-"));
  made.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("text a submission controls", () => {
  it("is printed with every control character but tab and newline escaped", () => {
    expect(printable(`a${ESC}[2Kb\rc\td\ne\u202ef\u0085`)).toBe("a\\u001b[2Kb\\u000dc\td\ne\\u202ef\\u0085");
    expect(printableLine("x\ny\tz")).toBe("x\\ny\\tz");
  });

  it("cannot rewrite the terminal report: no escape or carriage return reaches it", () => {
    const text = renderText(errorResult(`import threw: ${FORGED}`));
    expect(text).not.toMatch(/[\u001b\r]/);
    expect(text.split("\n")[0]).toBe("Grade report · 33-mcp-lite · ERROR");
  });

  it("shows HTML and Markdown in the job summary as text", () => {
    const md = renderMarkdown(errorResult("<h2>Grade report — ✅ pass</h2> **Score:** 100/100 ![x](https://example.invalid/x.png) | cell"));
    expect(md).not.toContain("<h2>");
    expect(md).toContain("&lt;h2&gt;");
    expect(md).not.toMatch(/[^\\]!\[x\]/);
    expect(md).not.toMatch(/[^\\]\*\*Score:\*\* 100/);
    expect(md).not.toMatch(/[^\\]\| cell/);
  });
});

describe("a batch folder", () => {
  it("passes over a name that is not UTF-8, a link (to a folder too) and a dangling link, and grades the rest", () => {
    const batch = folder();
    for (const name of ["alice", "bob"]) {
      mkdirSync(join(batch, name, "src"), { recursive: true });
      writeFileSync(join(batch, name, "src", "mcp-client.ts"), "export {};\n");
    }
    // A GBK-encoded name, as a zip made on a Chinese Windows leaves it (made with the shell:
    // Node can only name it through a Buffer).
    execFileSync("sh", ["-c", `mkdir "$1/gbk-$(printf '\\325\\305')"`, "sh", batch]);
    symlinkSync(join(batch, "alice"), join(batch, "mallory"));
    symlinkSync(join(batch, "gone"), join(batch, "zz-dangling"));
    const { names, skipped } = submissionFolders(batch, "src/mcp-client.ts");
    expect(names).toEqual(["alice", "bob"]);
    expect(skipped.map((s) => s.reason)).toEqual(["its name is not UTF-8: rename the folder", "a symbolic link, not a folder", "a symbolic link, not a folder"]);
    expect(skipped[0]!.name).toMatch(/^gbk-/);
  });
});

describe("the TODO(...) scan", () => {
  it("takes tags of up to 100 characters only, so a line of unclosed TODO( costs linear time", () => {
    const dir = folder();
    writeFileSync(join(dir, "a.ts"), `// TODO(${"x".repeat(100)})\n// TODO(${"y".repeat(101)})\n// ${"TODO(".repeat(20_000)}\n`);
    expect([...(todoMarkers(dir) ?? [])]).toEqual(["x".repeat(100)]);
  });
});
