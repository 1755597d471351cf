// What lets a second lab (labs/13-process-boundary) use the grader unchanged: the import check
// reads which kind each required export must be from the manifest, the report is in the
// language LAB_LANG asks for when --lang is not given, and lab 13's manifest is well formed.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../grader/cli-main.ts";
import { importCheck, loadManifest, ROOT } from "../../grader/grade.ts";
import type { GradeResult } from "../../grader/grade-result.ts";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  mkdirSync(join(ROOT, "tmp"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, "tmp", "lab-assume-"));
  temps.push(dir);
  return dir;
}

describe("a second lab", () => {
  it("is imported with its required exports of the kinds its manifest names", { timeout: 60_000 }, async () => {
    const { manifest, labDir } = await loadManifest("13-process-boundary");
    expect(manifest.exportKinds).toEqual({ runProcess: "function", ProcessError: "class" });
    const ok = await importCheck(join(labDir, "solution"), manifest, "en");
    expect(ok).toEqual({ ok: true });
    const wrong = tempDir();
    mkdirSync(join(wrong, "src"));
    writeFileSync(join(wrong, "src", "run-process.ts"), "export class runProcess {}\nexport class ProcessError extends Error {}\n");
    const verdict = await importCheck(wrong, manifest, "en");
    expect(verdict).toEqual({ ok: false, message: "src/run-process.ts exports runProcess, but it is not a function" });
  });

  it("has TODOs whose checks all exist in its manifest, like lab 33", async () => {
    for (const id of ["13-process-boundary", "33-mcp-lite"]) {
      const { manifest } = await loadManifest(id);
      const ids = new Set(manifest.checks.map((c) => c.id));
      for (const todo of manifest.todos ?? []) {
        for (const check of todo.checks) expect(ids.has(check) || check.startsWith("homework/"), `${id}: ${todo.tag} → ${check}`).toBe(true);
      }
      expect(manifest.todos?.length, id).toBeGreaterThan(0);
    }
  });
});

describe("grade CLI language", () => {
  it("reports in English when LAB_LANG=en and --lang is not given", async () => {
    const dir = tempDir();
    const file = join(dir, "result.json");
    const saved: GradeResult = {
      version: 1, lab: "33-mcp-lite", status: "fail", score: 0, maxScore: 100, bonus: { score: 0, maxScore: 0 }, seed: 3, lang: "zh",
      submission: "", startedAt: "", durationMs: 0, checks: [],
    };
    writeFileSync(file, JSON.stringify(saved));
    const before = process.env.LAB_LANG;
    let out = "";
    const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true } };
    try {
      process.env.LAB_LANG = "en";
      expect(await runCli(["--from", file], io)).toBe(1);
      expect(out).toContain("Grade report");
      out = "";
      expect(await runCli(["--from", file, "--lang", "zh"], io)).toBe(1);
      expect(out).toContain("评分报告");
    } finally {
      if (before === undefined) delete process.env.LAB_LANG;
      else process.env.LAB_LANG = before;
    }
  });
});
