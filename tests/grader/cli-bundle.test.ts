// The grade command's prebuilt bundle (grader/cli-bundle.mjs, started by grader/cli.mjs): it
// behaves as grader/cli.ts run through tsx (same output, same exit status, the labs' manifests
// included), and it is never run once a file it was built from, or the set of labs, changed.

import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildBundle, bundleIsFresh, bundlePath } from "../../grader/cli-bundle.mjs";
import { ROOT } from "../../grader/grade.ts";

// Inside the project, where the bundle's packages resolve, as the real one's do.
mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
const work = mkdtempSync(join(ROOT, "node_modules", ".cache", "lab-cli-bundle-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Runs the bundle in `outDir`, or the TypeScript through tsx, with `args`.
function run(how: "bundle" | "typescript", outDir: string, args: string[]) {
  const command = how === "bundle" ? ["--enable-source-maps", bundlePath(outDir)] : ["--import", "tsx", join(ROOT, "grader", "cli.ts")];
  return spawnSync(process.execPath, [...command, ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
}

describe("the prebuilt grade command", () => {
  it("prints and exits as grader/cli.ts does, and knows every lab's manifest", { timeout: 120_000 }, async () => {
    const out = join(work, "same");
    const built = await buildBundle(out);
    expect(built.labs).toEqual(expect.arrayContaining(["13-process-boundary", "33-mcp-lite"]));
    expect(bundleIsFresh(out)).toBe(true);
    for (const args of [["--help"], ["--lang", "fr"], ["--lab", "no-such-lab", "--format", "json"]]) {
      const bundled = run("bundle", out, args);
      const typescript = run("typescript", out, args);
      // (Each says when it started; a grader failure's stack names the same files and lines of
      // the grader, each loader its own name for a module's top level and frames of its own.)
      const same = (text: string) => text.replace(/"startedAt": "[^"]*"/g, '"startedAt": ""').replace(/ at [^(\\"]*\(/g, " at (").replace(/\\n {4}at \((?:node:|file:)[^)]*\)/g, "");
      expect({ args, status: bundled.status, stdout: same(bundled.stdout), stderr: bundled.stderr }).toEqual({ args, status: typescript.status, stdout: same(typescript.stdout), stderr: typescript.stderr });
    }
    // A lab's manifest comes from the bundle: --from re-renders with lab 13's check names.
    const saved = join(work, "saved.json");
    writeFileSync(saved, JSON.stringify({ version: 1, lab: "13-process-boundary", status: "fail", score: 0, maxScore: 10, bonus: { score: 0, maxScore: 0 }, seed: 5, lang: "en", submission: "x", startedAt: "", durationMs: 1, checks: [] }));
    const bundled = run("bundle", out, ["--from", saved, "--format", "text"]);
    const typescript = run("typescript", out, ["--from", saved, "--format", "text"]);
    expect(bundled.status).toBe(1);
    expect(bundled.stdout).toBe(typescript.stdout);
  });

  it("counts as stale once an input it was built from, or the set of labs, differs", { timeout: 60_000 }, async () => {
    const out = join(work, "stale");
    await buildBundle(out);
    const file = join(out, "cli.inputs.json");
    const recorded = JSON.parse(readFileSync(file, "utf8"));
    const inputs = Object.keys(recorded.inputs);
    expect(inputs).toEqual(expect.arrayContaining(["grader/cli.ts", "grader/grade.ts", "labs/33-mcp-lite/lab.ts", "grader/messages.json"]));
    expect(inputs.some((input: string) => input.includes("node_modules"))).toBe(false);
    const variants = [
      { ...recorded, inputs: { ...recorded.inputs, "grader/grade.ts": { ...recorded.inputs["grader/grade.ts"], mtimeMs: 1 } } },
      { ...recorded, inputs: { ...recorded.inputs, "grader/grade.ts": { ...recorded.inputs["grader/grade.ts"], size: 1 } } },
      { ...recorded, inputs: { ...recorded.inputs, "grader/gone.ts": { size: 1, mtimeMs: 1 } } },
      { ...recorded, labs: recorded.labs.slice(1) },
      { ...recorded, inputs: {} },
    ];
    for (const variant of variants) {
      writeFileSync(file, JSON.stringify(variant));
      expect(bundleIsFresh(out)).toBe(false);
    }
    writeFileSync(file, "{ not json");
    expect(bundleIsFresh(out)).toBe(false);
    writeFileSync(file, JSON.stringify(recorded));
    expect(bundleIsFresh(out)).toBe(true);
    // One that another user could have replaced is never run (run-grade.sh renders as root
    // what a grading user graded): a group- or world-writable bundle, inputs or folder.
    for (const path of [bundlePath(out), file, out]) {
      const mode = statSync(path).mode & 0o777;
      chmodSync(path, mode | 0o020);
      expect(bundleIsFresh(out)).toBe(false);
      chmodSync(path, mode);
    }
    expect(bundleIsFresh(out)).toBe(true);
    rmSync(bundlePath(out));
    expect(bundleIsFresh(out)).toBe(false);
  });

  it("writes a bundle only its owner can change, whatever the umask", { timeout: 60_000 }, async () => {
    const out = join(work, "umask");
    mkdirSync(out, { mode: 0o777 });
    chmodSync(out, 0o777);
    const before = process.umask(0o002);
    try {
      await buildBundle(out);
    } finally {
      process.umask(before);
    }
    for (const path of [out, bundlePath(out), join(out, "cli.inputs.json")]) expect(statSync(path).mode & 0o022).toBe(0);
    expect(bundleIsFresh(out)).toBe(true);
  });

  it("runs the TypeScript through tsx with LAB_GRADER_TYPESCRIPT=1", () => {
    const launched = spawnSync(process.execPath, [join(ROOT, "grader", "cli.mjs"), "--lang", "fr"], { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, LAB_GRADER_TYPESCRIPT: "1" } });
    expect(launched.status).toBe(2);
    expect(launched.stderr).toContain("usage: npm run grade");
  });
});
