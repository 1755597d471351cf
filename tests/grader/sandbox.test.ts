// The OS sandbox and the result channel on their own (grader/sandbox/): what a payload can
// see and do inside, that nothing it starts outlives it, and that the channel refuses
// forged, replayed and missing records. The corpus (tests/grader/corpus.test.ts) shows the
// same layers against whole hostile submissions.

import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../grader/cli-main.ts";
import { chooseSandbox, grade, hiddenPaths, ROOT } from "../../grader/grade.ts";
import { isLive, listProcs, commandLine } from "../../grader/procs.ts";
import { readChannel, sign } from "../../grader/sandbox/channel.ts";
import { SANDBOX_UID, sandboxSupport, startPayload } from "../../grader/sandbox/index.ts";

const work = mkdtempSync(join(tmpdir(), "lab-sandbox-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const support = sandboxSupport();

// What the payload reports about its world, as one JSON line on fd 3.
const PROBE = String.raw`
const fs = require("node:fs");
const net = require("node:net");
const { spawn } = require("node:child_process");
const [root, solution, hostMarker, scratch] = process.argv.slice(1);
const tryWrite = (file) => { try { fs.writeFileSync(file, "x"); return "written"; } catch (e) { return e.code; } };
spawn("/bin/sh", ["-c", "cd / && exec sleep 3133 &"], { detached: true, env: {}, stdio: "ignore" }).unref();
const socket = net.connect({ host: "1.1.1.1", port: 80 });
socket.on("error", (e) => report(e.code));
socket.on("connect", () => report("connected"));
function report(network) {
  fs.writeSync(3, JSON.stringify({
    uid: process.getuid(),
    capabilities: [/CapEff:\s*(\w+)/, /CapBnd:\s*(\w+)/].map((re) => re.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]),
    project: tryWrite(root + "/package.json.sandbox-test"),
    scratch: tryWrite(scratch + "/ok"),
    solution: fs.existsSync(solution) ? fs.readdirSync(solution) : "absent",
    hostTmp: fs.existsSync(hostMarker),
    home: fs.existsSync("/root") && fs.readdirSync("/root").length,
    network,
    pid: process.pid,
  }) + "\n");
  setTimeout(() => process.exit(0), 200);
}
`;

// As root the grader uses the root path; the user-namespace path (a grader that is not root)
// is checked too wherever the kernel allows unprivileged user namespaces.
const userNamespaces =
  process.platform === "linux" && spawnSync("/usr/bin/unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount", "/bin/true"], { timeout: 5_000 }).status === 0;
const kinds = [...(support.kind === "root" ? (["root"] as const) : []), ...(userNamespaces ? (["user"] as const) : [])];

describe.skipIf(kinds.length === 0).for(kinds)("the OS sandbox (%s)", (kind) => {
  it("runs the payload as nobody (or capless) in a read-only project with hidden solutions, a private /tmp, no network, and kills what it left", async () => {
    const gradeDir = join(work, `g-${kind}`);
    const scratch = join(gradeDir, "scratch");
    mkdirSync(scratch, { recursive: true });
    if (kind === "root") chownSync(scratch, SANDBOX_UID, SANDBOX_UID);
    const hostMarker = join(tmpdir(), `lab-sandbox-marker-${process.pid}-${kind}`);
    writeFileSync(hostMarker, "outside");
    const solution = join(ROOT, "labs", "33-mcp-lite", "solution");
    const hide = await hiddenPaths();
    expect(hide).toContain(solution);
    const payload = startPayload({
      command: [process.execPath, "-e", PROBE, ROOT, solution, hostMarker, scratch],
      cwd: scratch,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      input: "",
      sandbox: kind,
      root: ROOT,
      hide,
      gradeDir,
      scratch,
      cpuSeconds: 20,
    });
    payload.stdin.end();
    let text = "";
    payload.channel.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    await new Promise((resolve) => payload.child.once("exit", resolve));
    const report = await payload.report;
    rmSync(hostMarker, { force: true });
    const seen = JSON.parse(text.trim()) as Record<string, unknown>;
    expect(seen).toMatchObject({ project: "EROFS", scratch: "written", solution: [], hostTmp: false, home: false, network: "ENETUNREACH" });
    // A PID namespace of its own: numbering starts again at 1 (ns-init), its mounts took a few.
    expect(seen.pid).toBeLessThan(200);
    expect(seen.uid).toBe(kind === "root" ? SANDBOX_UID : 0);
    // No capability left, and none to regain (empty bounding set).
    expect(seen.capabilities).toEqual(["0000000000000000", "0000000000000000"]);
    // ns-init saw the daemon alive when the payload exited; the namespace took it down.
    expect(report?.alive?.map((p) => p.command)).toContain("sleep 3133");
    const alive = listProcs().filter((p) => isLive(p) && commandLine(p.pid).includes("sleep 3133"));
    expect(alive).toEqual([]);
  });
});

describe("the result channel", () => {
  const key = "k".repeat(64);
  const line = (record: Record<string, unknown>, mac?: string) => {
    const json = JSON.stringify(record);
    return `${mac ?? sign(key, json)} ${json}\n`;
  };
  const read = async (lines: string[]) => {
    const stream = new PassThrough();
    const reader = readChannel(stream, key);
    for (const l of lines) stream.write(l);
    stream.end();
    await reader.closed;
    return reader;
  };

  it("keeps signed records in sequence", async () => {
    const reader = await read([line({ seq: 0, event: "start" }), line({ seq: 1, event: "done" })]);
    expect(reader.tampered).toBeUndefined();
    expect(reader.records.map((r) => r.event)).toEqual(["start", "done"]);
  });

  it("refuses a forged signature, a replayed record and a missing one", async () => {
    expect((await read([line({ seq: 0, event: "done" }, "0".repeat(64))])).tampered).toMatch(/signature/);
    const first = line({ seq: 0, event: "start" });
    expect((await read([first, first])).tampered).toMatch(/record 0 where 1/);
    expect((await read([line({ seq: 1, event: "done" })])).tampered).toMatch(/record 1 where 0/);
  });
});

describe("grade folders and the sandbox choice", () => {
  it("grades in a private folder of the OS temp dir (never in the project) and removes it afterwards", async () => {
    let seen: { gradeDir: string; privateDir: string } | undefined;
    const result = await grade({ submission: join(ROOT, "labs", "33-mcp-lite", "corpus", "missing-export"), lang: "en", seed: 1, homework: false, onRun: (info) => (seen = info) });
    expect(result.status).toBe("error");
    expect(seen!.gradeDir.startsWith(`${tmpdir()}/`)).toBe(true);
    expect(seen!.gradeDir.startsWith(ROOT)).toBe(false);
    expect(existsSync(seen!.privateDir)).toBe(false);
    expect(result.phases?.copyMs).toBeTypeOf("number");
  });

  it("uses the sandbox wherever the machine has one; off never; required refuses only where there is none", () => {
    expect(chooseSandbox("off")).toEqual({ kind: "none" });
    expect(chooseSandbox("required")).toEqual(support.kind === "none" ? { refused: support.why } : { kind: support.kind });
    expect(chooseSandbox("auto")).toEqual({ kind: support.kind });
  });
});

describe("--sandbox", () => {
  it("is required, auto or off", async () => {
    const err: string[] = [];
    const code = await runCli(["--sandbox", "maybe"], { stdout: { write: () => true }, stderr: { write: (t: string) => err.push(t) } });
    expect(code).toBe(2);
    expect(err.join("")).toMatch(/--sandbox must be one of required, auto, off/);
  });
});
