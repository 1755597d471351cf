// The client host's bundle (grader/host-bundle.ts) is built as the grader, outside the
// sandbox: it must read nothing but regular files inside the submission's copy, never block
// on what the copy names, and give up at its bound. (Corpus entries bundler-borrow and
// bundler-device grade the same attacks end to end.)
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildHostBundle, moduleFile, readInside } from "../../grader/host-bundle.ts";
import { ROOT } from "../../grader/grade-folders.ts";

const LAB = join(ROOT, "labs", "33-mcp-lite");
const made: string[] = [];

function folder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

// A submission copy: its files by path, inside a folder of its own (so that what lies next to
// the copy is outside it).
function copyWith(files: Record<string, string>): { outer: string; copy: string } {
  const outer = folder("lab-bundle-");
  const copy = join(outer, "submission");
  mkdirSync(copy);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(copy, path, ".."), { recursive: true });
    writeFileSync(join(copy, path), text);
  }
  return { outer, copy };
}

// Lets a read blocked on the FIFO end (a writer that closes at once), waiting for the reader
// to come if it has not yet (ENXIO). Best effort: esbuild's service, unref'd, ends with this
// process anyway.
async function releaseReader(fifo: string): Promise<void> {
  for (let tries = 0; tries < 250; tries += 1) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENXIO") throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const CLIENT = `export class McpClient { constructor(readonly options: unknown) {} }\n`;

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the submission's host bundle", () => {
  it("bundles the reference solution, every module of it inlined", async () => {
    const { copy } = copyWith({});
    execFileSync("cp", ["-r", join(LAB, "solution", "src"), copy]);
    const bundle = await buildHostBundle(LAB, copy, "src/mcp-client.ts");
    expect(bundle).toBeDefined();
    const text = readFileSync(bundle!.submission, "utf8");
    expect(text).toMatch(/McpClient = class|class McpClient/);
    expect(text).not.toMatch(/from "\.\/[a-z-]+\.ts"/);
  });

  it("never inlines a file outside the copy, also when a package.json in the copy leads there", async () => {
    const { outer, copy } = copyWith({
      "src/mcp-client.ts": `// @ts-ignore\nimport secret from "../b/secret" with { type: "text" };\nimport other from "../../outside.txt" with { type: "text" };\nexport const leak = [secret, other];\n${CLIENT}`,
      "b/secret/package.json": JSON.stringify({ main: "../../../outside.txt" }),
    });
    writeFileSync(join(outer, "outside.txt"), "OUTSIDE-MARKER");
    const bundle = await buildHostBundle(LAB, copy, "src/mcp-client.ts");
    expect(bundle).toBeDefined();
    const text = readFileSync(bundle!.submission, "utf8");
    expect(text).not.toContain("OUTSIDE-MARKER");
    // Both stay run-time imports (where the host's guard and Node decide): the folder b/secret
    // as the folder it is, the other as the absolute path it named.
    expect(text).toContain(`${join(copy, "b", "secret")}"`);
    expect(text).toContain(`${join(outer, "outside.txt")}"`);
  });

  it("ends on a FIFO named by tsconfig.json, a package.json main, or a package.json above the copy", async () => {
    const { outer, copy } = copyWith({
      "src/mcp-client.ts": `// @ts-ignore\nimport x from "../k" with { type: "text" };\nexport const y = x;\n${CLIENT}`,
      "k/package.json": JSON.stringify({ main: "../../fifo" }),
      "tsconfig.json": JSON.stringify({ extends: "../fifo" }),
    });
    execFileSync("mkfifo", [join(outer, "fifo"), join(outer, "package.json"), join(outer, "tsconfig.json")]);
    const bundle = await buildHostBundle(LAB, copy, "src/mcp-client.ts");
    expect(bundle).toBeDefined();
    expect(readFileSync(bundle!.submission, "utf8")).toContain(`${join(copy, "k")}"`);
  });

  it("gives up at its bound when a build does not end, and builds again afterwards", async () => {
    // A lab whose host harness sits under a FIFO package.json: esbuild's own resolver (which
    // the trusted harness build still uses) blocks on it.
    const lab = folder("lab-bundle-lab-");
    mkdirSync(join(lab, "host"));
    writeFileSync(join(lab, "host", "host-main.ts"), "export const harness = 1;\n");
    execFileSync("mkfifo", [join(lab, "host", "package.json")]);
    const { copy } = copyWith({ "src/mcp-client.ts": CLIENT });
    const started = Date.now();
    expect(await buildHostBundle(lab, copy, "src/mcp-client.ts", 500)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(10_000);
    await releaseReader(join(lab, "host", "package.json"));
    const { copy: again } = copyWith({ "src/mcp-client.ts": CLIENT });
    expect(await buildHostBundle(LAB, again, "src/mcp-client.ts")).toBeDefined();
  });
});

describe("moduleFile and readInside", () => {
  it("finds a module as esbuild would, without reading any package.json", () => {
    const { copy } = copyWith({ "a.ts": "", "b/index.ts": "", "c/package.json": JSON.stringify({ main: "main.ts" }), "c/main.ts": "", "d.mts": "" });
    expect(moduleFile(join(copy, "a.ts"))).toBe(join(copy, "a.ts"));
    expect(moduleFile(join(copy, "a.js"))).toBe(join(copy, "a.ts"));
    expect(moduleFile(join(copy, "a"))).toBe(join(copy, "a.ts"));
    expect(moduleFile(join(copy, "d.mjs"))).toBe(join(copy, "d.mts"));
    expect(moduleFile(join(copy, "b"))).toBe(join(copy, "b", "index.ts"));
    expect(moduleFile(join(copy, "c"))).toBeUndefined();
    expect(moduleFile(join(copy, "missing"))).toBeUndefined();
  });

  it("reads a regular file inside the copy, and refuses a link, a FIFO and anything outside", () => {
    const { outer, copy } = copyWith({ "a.ts": "export {};" });
    const root = `${copy}/`;
    writeFileSync(join(outer, "outside.ts"), "x");
    symlinkSync(join(outer, "outside.ts"), join(copy, "link.ts"));
    execFileSync("mkfifo", [join(copy, "fifo.ts")]);
    expect(Buffer.from(readInside(root, join(copy, "a.ts")) as Uint8Array).toString()).toBe("export {};");
    expect(readInside(root, join(outer, "outside.ts"))).toEqual({ refused: "outside the submission" });
    expect(readInside(root, join(copy, "link.ts"))).toEqual({ refused: "reached through a link" });
    expect(readInside(root, join(copy, "fifo.ts"))).toEqual({ refused: "not a regular file" });
    expect(readInside(root, join(copy, "missing.ts"))).toEqual({ refused: "not found" });
  });
});
