// Files a submission could have touched, as the outer grader handles them: records read back
// never through a link, never blocking on a FIFO, only regular files of bounded size; the copy
// of regular files and folders only, which never changes anything outside it; and a cleanup
// that a locked folder cannot stop.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { copyRefusal, copySubmission } from "../../grader/copy-submission.ts";
import { grade, ROOT } from "../../grader/grade.ts";
import { appendRecordLine, readRecordFile, removeTree } from "../../grader/safe-fs.mjs";
import type { SandboxMode } from "../../grader/sandbox/index.ts";

const work = mkdtempSync(join(tmpdir(), "lab-safe-files-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const linux = process.platform === "linux";
const mkfifo = (path: string) => expect(spawnSync("mkfifo", [path]).status).toBe(0);

describe("a record read back", () => {
  const dir = join(work, "records");
  mkdirSync(dir);
  const outside = join(work, "root-only.txt");
  writeFileSync(outside, "secret\n", { mode: 0o600 });

  it("is the text of a regular file, and empty when missing", () => {
    writeFileSync(join(dir, "ok.jsonl"), '{"a":1}\n');
    expect(readRecordFile(join(dir, "ok.jsonl"))).toEqual({ ok: true, text: '{"a":1}\n' });
    expect(readRecordFile(join(dir, "none.jsonl"))).toEqual({ ok: true, text: "", missing: true });
  });

  it.skipIf(!linux)("is refused, without blocking, when it is a FIFO, a folder, a link, a socket or too big", async () => {
    mkfifo(join(dir, "fifo.jsonl"));
    mkdirSync(join(dir, "folder.jsonl"));
    symlinkSync(outside, join(dir, "link.jsonl"));
    writeFileSync(join(dir, "big.jsonl"), "x".repeat(2048));
    const server = createServer();
    await new Promise<void>((r) => server.listen(join(dir, "socket.jsonl"), r));
    try {
      expect(readRecordFile(join(dir, "fifo.jsonl"))).toEqual({ ok: false, refusal: "fifo" });
      expect(readRecordFile(join(dir, "folder.jsonl"))).toEqual({ ok: false, refusal: "folder" });
      expect(readRecordFile(join(dir, "link.jsonl"))).toEqual({ ok: false, refusal: "symlink" });
      expect(readRecordFile(join(dir, "socket.jsonl"))).toEqual({ ok: false, refusal: "socket" });
      expect(readRecordFile(join(dir, "big.jsonl"), 1024)).toEqual({ ok: false, refusal: "too-big", detail: "1024" });
    } finally {
      server.close();
    }
  });

  it.skipIf(!linux)("is appended to only when it is a regular file (never through a link, never blocking on a FIFO)", () => {
    expect(appendRecordLine(join(dir, "append.jsonl"), '{"b":2}')).toBe(true);
    expect(readFileSync(join(dir, "append.jsonl"), "utf8")).toBe('{"b":2}\n');
    mkfifo(join(dir, "append-fifo.jsonl"));
    expect(appendRecordLine(join(dir, "append-fifo.jsonl"), "{}")).toBe(false);
    symlinkSync(outside, join(dir, "append-link.jsonl"));
    expect(appendRecordLine(join(dir, "append-link.jsonl"), "{}")).toBe(false);
    expect(readFileSync(outside, "utf8")).toBe("secret\n");
  });
});

// A submission with links out of it (a 0600 file, a 0700 folder) and a FIFO: all refused.
function hostileSubmission(name: string): { dir: string; file: string; folder: string } {
  const dir = join(work, name);
  const file = join(work, `${name}-private.txt`);
  const folder = join(work, `${name}-private-dir`);
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "src", "mcp-client.ts"), "export class McpClient {}\nexport class McpError extends Error {}\n");
  writeFileSync(file, "private\n", { mode: 0o600 });
  mkdirSync(folder, { mode: 0o700 });
  symlinkSync(file, join(dir, "src", "notes.ts"));
  symlinkSync(folder, join(dir, "linked"));
  if (linux) mkfifo(join(dir, "src", "pipe.ts"));
  return { dir, file, folder };
}

describe("the submission's copy", () => {
  it("holds regular files and folders, modes set through their own handles", () => {
    const dir = join(work, "plain");
    mkdirSync(join(dir, "src", "deep"), { recursive: true });
    writeFileSync(join(dir, "src", "a.ts"), "a", { mode: 0o600 });
    writeFileSync(join(dir, "src", "deep", "run.sh"), "#!/bin/sh\n", { mode: 0o700 });
    mkdirSync(join(dir, "node_modules", "x"), { recursive: true });
    const dest = join(work, "plain-copy");
    expect(copySubmission(dir, dest)).toMatchObject({ ok: true, bytes: 11 });
    expect(statSync(join(dest, "src", "a.ts")).mode & 0o777).toBe(0o644);
    expect(statSync(join(dest, "src", "deep", "run.sh")).mode & 0o777).toBe(0o755);
    expect(statSync(join(dest, "src", "deep")).mode & 0o777).toBe(0o755);
    expect(existsSync(join(dest, "node_modules"))).toBe(false);
  });

  it("refuses links, FIFOs and sockets, names them, and changes nothing they point at", () => {
    const { dir, file, folder } = hostileSubmission("links");
    const outcome = copySubmission(dir, join(work, "links-copy"));
    expect(outcome).toMatchObject({ ok: false, why: "refused" });
    const refused = "refused" in outcome ? outcome.refused : [];
    expect(refused).toEqual(expect.arrayContaining([{ path: "linked", kind: "symlink" }, { path: "src/notes.ts", kind: "symlink" }]));
    if (linux) expect(refused).toContainEqual({ path: "src/pipe.ts", kind: "fifo" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
  });

  // The grader reads as its own user (root, often): a hard link made to a file its submitter
  // could not read (where the kernel does not protect links) would carry that file into the copy.
  it("refuses a file with another name outside the submission (a hard link), and leaves that file as it was", () => {
    const dir = join(work, "hardlinked");
    mkdirSync(join(dir, "src"), { recursive: true });
    writeFileSync(join(dir, "src", "mcp-client.ts"), "export {};\n");
    const secret = join(work, "hardlinked-secret.txt");
    writeFileSync(secret, "secret\n", { mode: 0o600 });
    linkSync(secret, join(dir, "src", "notes.txt"));
    const outcome = copySubmission(dir, join(work, "hardlinked-copy"));
    expect(outcome).toMatchObject({ ok: false, why: "refused", refused: [{ path: "src/notes.txt", kind: "hardlink" }] });
    if (!outcome.ok && outcome.why === "refused") expect(copyRefusal(outcome, "en")).toContain("src/notes.txt (hard link");
    expect(existsSync(join(work, "hardlinked-copy", "src", "notes.txt"))).toBe(false);
    expect(statSync(secret).mode & 0o777).toBe(0o600);
  });

  it.for<SandboxMode>(["auto", "off"])("makes the grade an error that names them (--sandbox %s), before anything runs", async (sandbox) => {
    const { dir, file, folder } = hostileSubmission(`grade-${sandbox}`);
    const result = await grade({ submission: dir, lang: "en", seed: 1, homework: false, sandbox });
    expect(result.status).toBe("error");
    expect(result.message).toMatch(/does not copy: .*linked \(symbolic link\)/);
    expect(result.message).toContain("src/notes.ts (symbolic link)");
    expect(result.checks.length).toBeGreaterThan(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
  });
});

// Builds a locked tree (0500 and 0000 folders, a link to a 0700 folder outside) and removes it
// with removeTree, as the user who owns it; prints the outcome as JSON.
const REMOVE = String.raw`
import { chmodSync, existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
const [safeFs, dir, outside] = process.argv.slice(2);
const { removeTree } = await import(safeFs);
mkdirSync(dir + "/trap/inner/deeper", { recursive: true });
writeFileSync(dir + "/trap/inner/deeper/file", "x");
symlinkSync(outside, dir + "/trap/inner/out");
chmodSync(dir + "/trap/inner/deeper", 0o000);
chmodSync(dir + "/trap/inner", 0o500);
chmodSync(dir + "/trap", 0o500);
const problem = removeTree(dir);
console.log(JSON.stringify({ problem: problem ?? null, gone: !existsSync(dir), outsideMode: statSync(outside).mode & 0o777 }));
`;

describe("the cleanup", () => {
  it.skipIf(!linux)("removes folders the submission locked (0500, 0000) as a grader that is not root, never through a link", () => {
    const base = mkdtempSync(join(tmpdir(), "lab-safe-remove-"));
    try {
      const outside = join(base, "outside");
      mkdirSync(outside, { mode: 0o700 });
      const dir = join(base, "tree");
      mkdirSync(dir);
      const script = join(base, "remove.mjs");
      writeFileSync(script, REMOVE);
      const args = [script, join(ROOT, "grader", "safe-fs.mjs"), dir, outside];
      const root = process.getuid?.() === 0;
      // As root, run it as nobody (root is never locked out, and that would prove nothing).
      if (root) for (const path of [base, outside, dir]) chownSync(path, 65534, 65534);
      if (root) chmodSync(base, 0o755);
      const run = root
        ? spawnSync("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...args], { encoding: "utf8" })
        : spawnSync(process.execPath, args, { encoding: "utf8" });
      expect(run.stderr).toBe("");
      expect(JSON.parse(run.stdout)).toEqual({ problem: null, gone: true, outsideMode: 0o700 });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
