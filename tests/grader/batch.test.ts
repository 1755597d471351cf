// --batch as a whole class's folder really looks: only submission-shaped folders are graded
// (archive debris and hidden folders passed over, a folder without the entry file reported),
// the gradebook's folder is made before the first grade, an unusable gradebook stops the batch
// before anything is graded (one line, no usage text), one grade that throws is an `error` row
// while the others are graded, and the CSV starts with a UTF-8 byte order mark for Excel.
// `grade` itself is replaced here: what is tested is the batch around it (cli.test.ts grades
// real submissions with --batch).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { GradeOptions } from "../../grader/grade.ts";
import type { GradeResult } from "../../grader/grade-result.ts";

const calls: string[] = [];
const checksAtCall = new Map<string, boolean>();
let expectFolder: string | undefined;

vi.mock("../../grader/grade.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../grader/grade.ts")>();
  return {
    ...original,
    // A stand-in grade: `boom*` folders throw, the others pass with 100/100.
    grade: async (options: GradeOptions): Promise<GradeResult> => {
      const name = basename(options.submission!);
      calls.push(name);
      if (expectFolder) checksAtCall.set(name, existsSync(expectFolder));
      if (name.startsWith("boom")) throw new Error(`boom in ${name}`);
      return { version: 1, lab: "33-mcp-lite", status: "pass", score: 100, maxScore: 100, bonus: { score: 0, maxScore: 10 }, seed: 1, lang: "en", message: "学员 ok", submission: options.submission!, startedAt: "", durationMs: 5, checks: [] };
    },
  };
});

const { runBatch, UTF8_BOM, BatchSetupError } = await import("../../grader/batch.ts");
const { runCli } = await import("../../grader/cli-main.ts");

const work = mkdtempSync(join(tmpdir(), "lab33-batch-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeEach(() => {
  calls.length = 0;
  checksAtCall.clear();
  expectFolder = undefined;
});

// A class folder: each name maps to the files it holds.
function classFolder(name: string, layout: Record<string, string>): string {
  const dir = join(work, name);
  for (const [path, text] of Object.entries(layout)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const CLIENT = "export class McpClient {}\n";

describe("--batch", () => {
  it("grades only submission-shaped folders and reports the others without grading them", async () => {
    const dir = classFolder("shapes", {
      "alice/src/mcp-client.ts": CLIENT,
      "bob/labs/33-mcp-lite/starter/src/mcp-client.ts": CLIENT,
      "carol/src/mcp-client.ts": CLIENT,
      "__MACOSX/alice/src/mcp-client.ts": CLIENT,
      ".git/src/mcp-client.ts": CLIENT,
      "notes.txt": "n",
    });
    const summary = await runBatch({ dir, lang: "en" });
    expect(calls.sort()).toEqual(["alice", "carol"]);
    expect(summary.results.map((r) => r.name)).toEqual(["alice", "carol"]);
    expect(summary.skipped).toEqual([{ name: "bob", reason: "no src/mcp-client.ts" }]);
    expect(JSON.parse(readFileSync(summary.jsonFile, "utf8")).skipped).toEqual(summary.skipped);
  });

  it("keeps grading after a grade throws: that folder is an error row, the others are graded", async () => {
    const dir = classFolder("throws", { "a/src/mcp-client.ts": CLIENT, "boom/src/mcp-client.ts": CLIENT, "c/src/mcp-client.ts": CLIENT, "d/src/mcp-client.ts": CLIENT });
    const summary = await runBatch({ dir, lang: "en", workers: 1 });
    expect(calls).toEqual(["a", "boom", "c", "d"]);
    expect(summary.results.map((r) => [r.name, r.result.status])).toEqual([["a", "pass"], ["boom", "error"], ["c", "pass"], ["d", "pass"]]);
    expect(summary.results[1]!.result.message).toBe("grader failure: boom in boom");
    // The error row still lists every check of the lab, at 0 points.
    expect(summary.results[1]!.result.checks.length).toBeGreaterThan(0);
    const rows = readFileSync(summary.csvFile, "utf8").split("\r\n");
    expect(rows[2]).toMatch(/^boom,boom,error,0,100,/);
  });

  it("makes the gradebook's folder before the first grade starts", async () => {
    const dir = classFolder("folder", { "a/src/mcp-client.ts": CLIENT });
    const prefix = join(work, "out-folder", "nested", "lab33");
    expectFolder = join(work, "out-folder", "nested");
    const summary = await runBatch({ dir, gradebook: prefix });
    expect(checksAtCall.get("a")).toBe(true);
    expect(summary.csvFile).toBe(`${prefix}.csv`);
    expect(existsSync(`${prefix}.json`)).toBe(true);
  });

  it("stops before grading anything when the gradebook cannot be written, and says so in one line without the usage text", async () => {
    const dir = classFolder("unwritable", { "a/src/mcp-client.ts": CLIENT });
    const blocker = join(work, "a-file");
    writeFileSync(blocker, "not a folder");
    await expect(runBatch({ dir, gradebook: join(blocker, "lab33") })).rejects.toBeInstanceOf(BatchSetupError);
    expect(calls).toEqual([]);
    let stderr = "";
    const status = await runCli(["--batch", dir, "--gradebook", join(blocker, "lab33")], { stdout: { write: () => true }, stderr: { write: (t: string) => (stderr += t) } });
    expect(status).toBe(2);
    expect(calls).toEqual([]);
    expect(stderr).toMatch(/^cannot write the gradebook \(.*a-file\/lab33\.csv, .*a-file\/lab33\.json\): (EEXIST|ENOTDIR)/);
    expect(stderr).not.toContain("usage:");
  });

  it("starts the CSV with a UTF-8 byte order mark so a spreadsheet reads the Chinese messages, unless told not to", async () => {
    const dir = classFolder("bom", { "a/src/mcp-client.ts": CLIENT });
    const withBom = readFileSync((await runBatch({ dir })).csvFile);
    expect([...withBom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(withBom.toString("utf8")).toMatch(new RegExp(`^${UTF8_BOM}student,submission,`));
    expect(withBom.toString("utf8")).toContain("学员 ok");
    const plain = readFileSync((await runBatch({ dir, bom: false })).csvFile, "utf8");
    expect(plain.startsWith("student,")).toBe(true);
  });

  it("prints the usage text for a usage error only", async () => {
    let stderr = "";
    const status = await runCli(["--batch", work, "--workers", "zero"], { stdout: { write: () => true }, stderr: { write: (t: string) => (stderr += t) } });
    expect(status).toBe(2);
    expect(stderr).toContain("--workers needs a positive integer");
    expect(stderr).toContain("usage:");
  });
});
