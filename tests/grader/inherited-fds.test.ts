// Descriptors the grader inherits open across exec from whoever starts it (`npm run grade …
// 77>>out 78<secret`, a pipe of the tool that started npm) reach none of the submission's
// processes (grader/sandbox/inherited-fds.mjs). Before, the import check and every client
// host held them, sandboxed or not: they wrote into the one and read the other, and the
// secret was in the report. The corpus test cannot give the grader such descriptors (it
// grades in its own worker), so these start the processes themselves with them open:
// - the grade command (grader/cli.mjs) grades the corpus entry `inherited-fds` (which writes
//   into and reads back every descriptor it holds open across exec, at import and in its
//   constructor, and throws with what it found): pass, its marker and the secret nowhere in
//   the result, nothing written into the file; sandboxed and with --sandbox off;
// - startPayload on its own, as grade() runs in a process the grader does not own and must
//   not close descriptors in (the project's tests): the payload holds nothing of its caller's,
//   /dev/null in their place without a sandbox, nothing at all in one (ns-init closes them);
// - which descriptors count as inherited, and what is kept.

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { listCorpus, materialize } from "../../grader/corpus.ts";
import { loadManifest, ROOT } from "../../grader/grade.ts";
import { sandboxSupport } from "../../grader/sandbox/index.ts";
import { GRADE_TEST_TIMEOUT_MS } from "./pool.ts";
import { kinds, sandboxOf } from "./sandbox-kinds.ts";

const work = mkdtempSync(join(tmpdir(), "lab-inherited-fds-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SECRET = `lab-inherited-secret-${randomBytes(8).toString("hex")}`;
/** Where the caller's descriptors are: above the few Node marks close-on-exec when it starts. */
const OUT_FD = 77;
const SECRET_FD = 78;
const MARKER = "lab-corpus-inherited-fds";

// A file open for appending at OUT_FD and a root-only secret open for reading at SECRET_FD, as
// the red team gave them; `name` tells the runs' files apart.
function callerFiles(name: string) {
  const out = join(work, `${name}-out.txt`);
  const secret = join(work, `${name}-secret.txt`);
  writeFileSync(out, "", { mode: 0o600 });
  writeFileSync(secret, `${SECRET}\n`, { mode: 0o600 });
  return { out, secret, fds: { [OUT_FD]: openSync(out, "a"), [SECRET_FD]: openSync(secret, "r") } };
}

// Runs `node args` in the project with `extra` open at the given descriptor numbers (stdout
// and stderr piped); the test's copies are closed once it started.
function nodeWith(args: string[], extra: Record<number, number>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const top = Math.max(...Object.keys(extra).map(Number));
  const stdio = Array.from({ length: top + 1 }, (_, fd) => extra[fd] ?? (fd === 1 || fd === 2 ? "pipe" : "ignore"));
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio });
  for (const fd of Object.values(extra)) closeSync(fd);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe.concurrent("the grade command started with descriptors of its caller open", () => {
  const modes = sandboxSupport().kind === "none" ? (["off"] as const) : (["auto", "off"] as const);
  it.for(modes)("grades a client that tries every descriptor it holds (--sandbox %s) without any of them", { timeout: GRADE_TEST_TIMEOUT_MS }, async (sandbox) => {
    const { manifest, labDir } = await loadManifest("33-mcp-lite");
    const entry = listCorpus(labDir).find((e) => e.name === "inherited-fds")!;
    const submission = materialize(entry, join(labDir, manifest.solution), join(work, sandbox));
    const json = join(work, `${sandbox}.json`);
    const caller = callerFiles(sandbox);
    const args = [join(ROOT, "grader", "cli.mjs"), "--submission", submission, "--seed", "3", "--lang", "en", "--sandbox", sandbox, "--json", json];
    const run = await nodeWith(args, caller.fds);
    const result = readFileSync(json, "utf8");
    // Before: fail, the secret in the message of every test that built a client (the
    // constructor throws with it), a line in the file from the import check and each host.
    for (const text of [result, run.stdout, run.stderr]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(MARKER);
    }
    expect(readFileSync(caller.out, "utf8")).toBe("");
    expect(JSON.parse(result)).toMatchObject({ status: "pass", score: 100 });
    expect(run.code).toBe(0);
  });
});

// What the payload holds, by `ls -l /proc/self/fd` in it: descriptor → what it is.
const LIST_FDS = String.raw`
const [index, kind, dir] = process.argv.slice(1);
const { startPayload } = await import(index);
const payload = startPayload({
  command: ["/bin/ls", "-l", "/proc/self/fd/"], cwd: "/", env: { PATH: "/usr/bin:/bin" }, input: "",
  ...JSON.parse(kind), root: process.cwd(), hide: [], gradeDir: dir, scratch: dir + "/scratch", cpuSeconds: 10,
});
payload.stdin.end();
payload.child.stdout.pipe(process.stdout);
payload.child.stderr.pipe(process.stderr);
await new Promise((resolve) => payload.child.on("close", resolve));
const report = await payload.report;
if (report?.setupError) process.stderr.write(report.setupError);
`;

describe("startPayload in a process that holds descriptors of its caller", () => {
  const runs = [{ name: "none", options: { sandbox: "none" } }, ...kinds.map((kind) => ({ name: kind, options: sandboxOf(kind) }))];
  it.for(runs)("gives the payload none of them ($name)", async ({ name, options }) => {
    const dir = join(work, `payload-${name}`);
    mkdirSync(join(dir, "scratch"), { recursive: true });
    const caller = callerFiles(`payload-${name}`);
    const index = pathToFileURL(join(ROOT, "grader", "sandbox", "index.ts")).href;
    const run = await nodeWith(["--import", "tsx", "--input-type=module", "-e", LIST_FDS, index, JSON.stringify(options), dir], caller.fds);
    expect(run.stderr).toBe("");
    const held = new Map([...run.stdout.matchAll(/ (\d+) -> (.*)$/gm)].map((m) => [Number(m[1]), m[2]!]));
    expect(held.get(3), run.stdout).toMatch(/^(pipe|socket):/); // the result channel
    // Beyond the channel: ls's own listing of the folder, and (without a sandbox, whose
    // ns-init closes them) /dev/null where the caller's were.
    const others = [...held].filter(([fd, what]) => fd > 3 && !what.startsWith("/proc/"));
    if (name === "none") expect(others).toEqual(expect.arrayContaining([[OUT_FD, "/dev/null"], [SECRET_FD, "/dev/null"]]));
    expect(others.filter(([, what]) => what !== "/dev/null")).toEqual([]);
    if (name !== "none") expect(others).toEqual([]);
    expect(readFileSync(caller.out, "utf8")).toBe("");
  });
});

// Which of its descriptors a process would pass on, and what closing them keeps.
const CLOSE = String.raw`
const { closeInheritedFds, inheritableFds } = await import(process.argv[1]);
const before = inheritableFds();
const closed = closeInheritedFds([${OUT_FD}]);
console.log(JSON.stringify({ before, closed, after: inheritableFds() }));
`;

describe("inheritableFds / closeInheritedFds", () => {
  it("find the descriptors open across exec from 3 up, and close all but those kept", async () => {
    const caller = callerFiles("close");
    const module = pathToFileURL(join(ROOT, "grader", "sandbox", "inherited-fds.mjs")).href;
    const run = await nodeWith(["--input-type=module", "-e", CLOSE, module], caller.fds);
    expect(run.stderr).toBe("");
    const { before, closed, after } = JSON.parse(run.stdout) as Record<string, number[]>;
    // (The test's own process may hold more of its caller's: they are passed on too.)
    expect(before).toEqual(expect.arrayContaining([OUT_FD, SECRET_FD]));
    expect(before!.every((fd) => fd >= 3)).toBe(true);
    expect(closed).toContain(SECRET_FD);
    expect(closed).not.toContain(OUT_FD);
    expect(after).toEqual([OUT_FD]);
  });
});
