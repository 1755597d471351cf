// The learner's loop, `npm run lab:starter` (scripts/lab-test.ts): a type error is shown once
// as the compiler prints it and nothing runs; a client that never returns is stopped at the
// wall-clock limit with the tests (or test files) still running named; --lang en and LAB_LANG are honoured.

import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseArgs } from "../../scripts/lab-test.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const STARTER = join(ROOT, "labs", "33-mcp-lite", "starter");

function labTest(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "lab-test.mjs"), ...args], {
      cwd: ROOT,
      env: { ...process.env, LAB_LANG: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c));
    child.stderr.on("data", (c: Buffer) => (output += c));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output: output.replace(/\u001b\[[0-9;]*m/g, "") }));
  });
}

// A copy of the starter with one edit to its mcp-client.ts, inside the workbook (its git-ignored
// tmp/), where the package's "type": "module" applies as it does to the learner's own copy.
function starterWith(edit: (source: string) => string): { dir: string; cleanup: () => void } {
  mkdirSync(join(ROOT, "tmp"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, "tmp", "lab-loop-"));
  cpSync(STARTER, dir, { recursive: true });
  const file = join(dir, "src", "mcp-client.ts");
  writeFileSync(file, edit(readFileSync(file, "utf8")));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("lab:starter", () => {
  it("reads --lang, LAB_LANG, --watch and --limit-s, and refuses a bad value", () => {
    expect(parseArgs(["starter", "--lang", "en", "timeout"], {})).toMatchObject({ target: "starter", lang: "en", rest: ["timeout"] });
    expect(parseArgs([], { LAB_LANG: "en" })).toMatchObject({ target: "solution", lang: "en" });
    expect(parseArgs(["starter", "--watch", "--limit-s=5", "--lab", "13"], {})).toMatchObject({ watch: true, limitS: 5, lab: "13" });
    expect(parseArgs(["--lang", "fr"], {}).error).toBe("badLang");
    expect(parseArgs(["--limit-s", "0"], {}).error).toBe("badLimit");
  });

  it("shows a type error once, as the compiler prints it, and runs no test", { timeout: 120_000 }, async () => {
    const copy = starterWith((s) => `${s}\nexport const wrong: number = "not a number";\n`);
    try {
      const { code, output } = await labTest([copy.dir]);
      expect(code).toBe(2);
      expect(output.match(/error TS2322/g)).toHaveLength(1);
      expect(output).toContain("src/mcp-client.ts");
      expect(output).toContain("类型检查没有通过");
      expect(output).not.toContain("Test Files");
    } finally {
      copy.cleanup();
    }
  });

  it("stops a client whose callTool never returns at the wall-clock limit and names the tests still running, in English", { timeout: 300_000 }, async () => {
    const copy = starterWith((s) => s.replace("return this.call(\"tools/call\", { name, arguments: args });", "for (;;) {}"));
    // The loop's own temp dir: a run stopped at the limit must leave nothing in it (its
    // workers are killed before they can remove their fixture workspaces).
    const temp = mkdtempSync(join(tmpdir(), "lab33-loop-test-"));
    try {
      // Long enough for vitest to start the test on a loaded machine; the loop never ends.
      const { code, output } = await labTest([copy.dir, "--limit-s", "60", "happy-path"], { LAB_LANG: "en", TMPDIR: temp, TEMP: temp, TMP: temp });
      // (tsx keeps its compile cache there, tsx-<uid>, on purpose: not the run's.)
      expect(readdirSync(temp).filter((name) => !name.startsWith("tsx-"))).toEqual([]);
      expect(code).toBe(1);
      expect(output).toContain("The run was stopped after 60 s");
      // The worker is stuck before it can report its test, so the file is named.
      expect(output).toMatch(/(Tests|Test files) still running then[^:]*: .*(evidence\/happy-path > |tests\/evidence\/happy-path\.test\.ts)/);
      expect(output).toContain("1. type check of");
    } finally {
      copy.cleanup();
      rmSync(temp, { recursive: true, force: true });
    }
  });

  it("says why a copy outside the workbook does not type-check", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "lab33-outside-"));
    try {
      cpSync(STARTER, dir, { recursive: true });
      const { code, output } = await labTest([dir, "--lang", "en"]);
      expect(code).toBe(2);
      expect(output).toContain("outside the workbook");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reports an import that never finishes with its file and line, before any test", { timeout: 120_000 }, async () => {
    const copy = starterWith((s) => `${s}\nawait new Promise(() => {});\n`);
    try {
      const { code, output } = await labTest([copy.dir, "--lang", "en"]);
      expect(code).toBe(2);
      expect(output).toContain("The import check failed");
      expect(output).not.toContain("Test Files");
    } finally {
      copy.cleanup();
    }
  });
});
