// The precompiled test-side harness of a hosted lab (grader/harness-mirror.mjs): what it holds
// (the modules the test files import, never a test file, a setup file or the submission), that
// each module still imports its neighbours and knows its own source's URL, and that a stale or
// unsafely owned mirror is never used.

import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildMirror, freshMirror, MIRROR_INPUTS, mirroredPath, readyMirror } from "../../grader/harness-mirror.mjs";
import { ROOT } from "../../grader/grade.ts";

// Inside the project's node_modules, where the mirror's package imports resolve, as the real one's do.
mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
const work = mkdtempSync(join(ROOT, "node_modules", ".cache", "lab-harness-mirror-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const LAB = "33-mcp-lite";
const source = (file: string) => join(ROOT, file);

describe("the harness mirror", () => {
  it("holds every module the test side imports, and no test file, setup file or submission", { timeout: 60_000 }, async () => {
    const root = join(work, "holds");
    const built = await buildMirror(LAB, root);
    const { dir, sources } = freshMirror(LAB, root)!;
    expect(dir).toBe(built!.dir);
    expect(sources.length).toBe(built!.modules);
    for (const file of ["labs/33-mcp-lite/tests/support.ts", "labs/33-mcp-lite/tests/observers.ts", "labs/33-mcp-lite/host/proxy.ts", "labs/33-mcp-lite/host/channel.ts", "labs/33-mcp-lite/probes/model/run.ts", "fixtures/index.ts", "grader/procs.ts"]) {
      expect(sources).toContain(source(file));
    }
    for (const file of sources) {
      expect(file).not.toMatch(/\.test\.ts$|[\\/]setup\.ts$|[\\/](?:solution|starter|corpus)[\\/]/);
      expect(statSync(mirroredPath(built!.dir, file)).mode & 0o022).toBe(0);
    }
  });

  it("keeps each module's imports and its source's import.meta.url", { timeout: 60_000 }, async () => {
    const root = join(work, "imports");
    const { dir } = (await buildMirror(LAB, root))!;
    const support = readFileSync(mirroredPath(dir, source("labs/33-mcp-lite/tests/support.ts")), "utf8");
    // A mirrored neighbour by its mirror's URL; what is not mirrored (the fixtures' .mjs) by its own.
    expect(support).toContain(JSON.stringify(pathToFileURL(mirroredPath(dir, source("labs/33-mcp-lite/tests/observers.ts"))).href));
    const fixtures = readFileSync(mirroredPath(dir, source("fixtures/index.ts")), "utf8");
    expect(fixtures).toContain(JSON.stringify(pathToFileURL(source("fixtures/pool.mjs")).href));
    // The hosted proxy stands for the submission's entry.
    const common = readFileSync(mirroredPath(dir, source("labs/33-mcp-lite/tests/evidence/common.ts")), "utf8");
    expect(common).toContain(JSON.stringify(pathToFileURL(mirroredPath(dir, source("labs/33-mcp-lite/host/proxy.ts"))).href));
    expect(common).not.toContain("#submission");
    // Loaded natively, a module finds the project's files from its own source's place.
    const probe = `const m = await import(${JSON.stringify(pathToFileURL(mirroredPath(dir, source("fixtures/index.ts"))).href)}); console.log(m.FIXTURE_SERVER);`;
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: ROOT, encoding: "utf8", timeout: 30_000 });
    expect(out.stderr).toBe("");
    expect(out.stdout.trim()).toBe(source("fixtures/mcp-server.mjs"));
  });

  it("is not used once a source changed, or where another user could have written it", { timeout: 60_000 }, async () => {
    const root = join(work, "stale");
    const { dir } = (await buildMirror(LAB, root))!;
    expect(freshMirror(LAB, root)?.dir).toBe(dir);
    const inputs = join(dir, MIRROR_INPUTS);
    const recorded = JSON.parse(readFileSync(inputs, "utf8"));
    const first = Object.keys(recorded.sources)[0]!;
    writeFileSync(inputs, JSON.stringify({ sources: { ...recorded.sources, [first]: { ...recorded.sources[first], mtimeMs: 1 } } }));
    expect(freshMirror(LAB, root)).toBeUndefined();
    writeFileSync(inputs, JSON.stringify({ sources: { ...recorded.sources, "labs/33-mcp-lite/tests/gone.ts": { size: 1, mtimeMs: 1 } } }));
    expect(freshMirror(LAB, root)).toBeUndefined();
    writeFileSync(inputs, JSON.stringify(recorded));
    expect(freshMirror(LAB, root)).toBeDefined();
    const folder = join(root, LAB);
    for (const path of [root, folder, join(folder, "current"), dir, inputs]) {
      const mode = statSync(path).mode & 0o777;
      chmodSync(path, mode | 0o002);
      expect(freshMirror(LAB, root)).toBeUndefined();
      chmodSync(path, mode);
    }
    writeFileSync(join(folder, "current"), "../../elsewhere\n");
    expect(freshMirror(LAB, root)).toBeUndefined();
    rmSync(mirroredPath(dir, source("labs/33-mcp-lite/tests/support.ts")));
    expect(freshMirror(LAB, root)).toBeUndefined();
  });

  it("builds a stale one again in a folder of its own, once however many grades ask at the same time", { timeout: 60_000 }, async () => {
    const root = join(work, "again");
    const { dir } = (await buildMirror(LAB, root))!;
    rmSync(mirroredPath(dir, source("labs/33-mcp-lite/tests/support.ts")));
    const ready = await Promise.all([readyMirror(LAB, root), readyMirror(LAB, root), readyMirror(LAB, root)]);
    // The same sources make the same build: rebuilt into place, and the one folder for all three.
    expect(new Set(ready)).toEqual(new Set([dir]));
    expect(freshMirror(LAB, root)?.dir).toBe(dir);
  });

  it("is built only for a lab whose client runs in a host", async () => {
    expect(await buildMirror("13-process-boundary", join(work, "lab13"))).toBeUndefined();
  });
});
