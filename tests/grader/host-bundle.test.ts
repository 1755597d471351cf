// The client host's bundle (grader/host-bundle.ts) is built as the grader, outside the
// sandbox: it must read nothing but regular files inside the submission's copy, never block
// on what the copy names (a source map comment included), and give up at its bound, stopping
// esbuild's service. (Corpus entries bundler-borrow, bundler-device and bundler-sourcemap
// grade the same attacks end to end.)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
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

// The esbuild processes (its service) this process started, by pid.
function esbuildChildren(): string[] {
  let listed = "";
  try {
    listed = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
  } catch {
    // none at all (ps exits 1)
  }
  return listed.split("\n").filter((line) => /\besbuild$/.test(line.trim())).map((line) => line.trim().split(/\s+/)[0]!);
}

async function until(done: () => boolean, ms = 5_000): Promise<boolean> {
  for (const end = Date.now() + ms; !done() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 50));
  return done();
}

// Where the submission's bundle maps the first occurrence of `text`: its source and line (1-based).
function mappedAt(bundleText: string, text: string): { source: string; line: number } {
  const payload = JSON.parse(Buffer.from(/sourceMappingURL=data:application\/json;base64,(\S+)/.exec(bundleText)![1]!, "base64").toString()) as SourceMapPayload;
  const lines = bundleText.split("\n");
  const line = lines.findIndex((each) => each.includes(text));
  const entry = new SourceMap(payload).findEntry(line, lines[line]!.indexOf(text)) as { originalSource: string; originalLine: number };
  return { source: entry.originalSource, line: entry.originalLine + 1 };
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

  it("follows no source map comment of a module: a FIFO, a device, a map outside the copy; its own map still names the .ts lines", async () => {
    // esbuild keeps a module's last such comment: one attack per module, each form once. The
    // same text inside a string stays the string it was.
    const { outer, copy } = copyWith({
      "src/mcp-client.ts": `import { fromFifo } from "./a.ts";\nimport { fromDevice } from "./b.ts";\nimport { fromMap } from "./c.ts";\nexport const text = \`\n//# sourceMappingURL=../../fifo\n\`;\nexport const all = [fromFifo, fromDevice, fromMap, "ENTRY-LINE"];\n${CLIENT}`,
      "src/a.ts": `export const fromFifo = "FIFO-LINE";\n//# sourceMappingURL=../../fifo\n`,
      "src/b.ts": `\n\nexport const fromDevice = "DEVICE-LINE";\n/*# sourceMappingURL=file:///dev/ptmx */`,
      "src/c.ts": `\nexport const fromMap = "MAP-LINE";\n//@ sourceMappingURL=../../outside.map`,
    });
    execFileSync("mkfifo", [join(outer, "fifo")]);
    writeFileSync(join(outer, "outside.map"), JSON.stringify({ version: 3, sources: ["OUTSIDE-SOURCE.ts"], sourcesContent: ["OUTSIDE-CONTENT"], names: [], mappings: "AAAA;AACA" }));
    // (A build that read the FIFO or the device would wait out its bound: no bundle.)
    const bundle = await buildHostBundle(LAB, copy, "src/mcp-client.ts", 10_000);
    expect(bundle).toBeDefined();
    const text = readFileSync(bundle!.submission, "utf8");
    expect(text).toContain("\n//# sourceMappingURL=../../fifo\n`");
    const map = Buffer.from(/sourceMappingURL=data:application\/json;base64,(\S+)/.exec(text)![1]!, "base64").toString();
    expect(map).not.toContain("OUTSIDE");
    expect(mappedAt(text, "FIFO-LINE")).toEqual({ source: expect.stringMatching(/\/src\/a\.ts$/), line: 1 });
    expect(mappedAt(text, "DEVICE-LINE")).toEqual({ source: expect.stringMatching(/\/src\/b\.ts$/), line: 3 });
    expect(mappedAt(text, "MAP-LINE")).toEqual({ source: expect.stringMatching(/\/src\/c\.ts$/), line: 2 });
    expect(mappedAt(text, "ENTRY-LINE")).toEqual({ source: expect.stringMatching(/\/src\/mcp-client\.ts$/), line: 7 });
  });

  it("gives up at its bound when a build does not end, stopping esbuild's service, and builds again afterwards", async () => {
    // A lab whose host harness sits under a FIFO package.json: esbuild's own resolver (which
    // the trusted harness build still uses) blocks on it.
    const lab = folder("lab-bundle-lab-");
    mkdirSync(join(lab, "host"));
    writeFileSync(join(lab, "host", "host-main.ts"), "export const harness = 1;\n");
    execFileSync("mkfifo", [join(lab, "host", "package.json")]);
    const { copy } = copyWith({ "src/mcp-client.ts": CLIENT });
    const { copy: other } = copyWith({ "src/mcp-client.ts": CLIENT });
    // A second grade's build stuck on the same service, with a bound far beyond this test's
    // timeout: the first one's stop ends it too, and it gives up then (were it to wait for its
    // own bound, the test would time out). No stopwatch: the order decides.
    const second = buildHostBundle(lab, other, "src/mcp-client.ts", 3_600_000);
    const first = buildHostBundle(lab, copy, "src/mcp-client.ts", 3_000);
    // (The service is spawned as the first build starts; seen before the first bound ends it.)
    expect(await until(() => esbuildChildren().length > 0, 3_000)).toBe(true);
    const stuck = esbuildChildren();
    expect(await first).toBeUndefined();
    expect(await second).toBeUndefined();
    // The service stuck in its read is gone (the grader could not exit while it ran).
    expect(await until(() => stuck.every((pid) => !existsSync(`/proc/${pid}`)))).toBe(true);
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
