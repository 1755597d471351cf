// The sandbox's client host launcher (grader/sandbox/host-launcher.mjs) on its own: a payload
// that hosts its client (LAB_CLIENT_HOST=1) starts a host through the lab's bridge
// (labs/33-mcp-lite/host/bridge.mjs), which uses the launcher the sandbox offers. The host
// must find itself alone in PID and mount namespaces of its own (its /proc, no launcher
// socket or token, only the shared fixture folder of the scratch), the worker must still see
// the host's processes under their own pids, a connection without the token gets nothing,
// and nothing the host started outlives the payload.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../grader/grade.ts";
import { commandLine, isLive, listProcs } from "../../grader/procs.ts";
import { startPayload } from "../../grader/sandbox/index.ts";
import { kinds, sandboxOf, support, type Kind } from "./sandbox-kinds.ts";

const work = mkdtempSync(join(tmpdir(), "lab-sandbox-host-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The client host: what it can see and reach, then a grandchild (`sleep 3141`) whose pid goes
// into the shared fixture folder, then its report on fd 3. It never exits by itself.
const HOST = String.raw`
const fs = require("node:fs");
const { spawn } = require("node:child_process");
const { WORKER_PID, SHARED, SCRATCH } = process.env;
const attempt = (fn) => { try { fn(); return "ok"; } catch (e) { return e.code; } };
const sleeper = spawn("sleep", ["3141"], { stdio: "ignore" });
fs.writeFileSync(SHARED + "/pids.txt", String(sleeper.pid));
// (A "reply" the bridge was not waiting for: the kind of message a host may send that it passes on.)
fs.writeSync(3, JSON.stringify({
  t: "reply",
  uid: process.getuid(),
  gid: process.getgid(),
  name: (() => { try { return require("node:os").userInfo().username; } catch (e) { return e.code; } })(),
  pid: process.pid,
  ppid: process.ppid,
  procs: fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e)).length,
  workerProc: attempt(() => fs.readFileSync("/proc/" + WORKER_PID + "/cmdline")),
  launcher: attempt(() => fs.readdirSync("/.lab-launcher")),
  launcherEnv: Object.keys(process.env).filter((k) => k.startsWith("LAB_HOST_LAUNCHER")),
  scratch: fs.readdirSync(SCRATCH).sort(),
  sharedWrite: attempt(() => fs.writeFileSync(SHARED + "/from-host", "x")),
}) + "\n");
setInterval(() => {}, 1000);
`;

// The payload: one host through the bridge, one connection without the token, then what it
// saw of the host's processes; it exits with the host still running.
const PAYLOAD = String.raw`
const fs = require("node:fs");
const net = require("node:net");
const { Worker } = require("node:worker_threads");
const [bridge, hostFile, shared, scratch] = process.argv.slice(1);
const status = (pid) => { try { return fs.readFileSync("/proc/" + pid + "/status", "utf8"); } catch { return ""; } };
const nspid = (pid) => (/^NSpid:\s*(.*)$/m.exec(status(pid))?.[1] ?? "").trim().split(/\s+/).map(Number);
const refused = new Promise((resolve) => {
  const socket = net.connect(process.env.LAB_HOST_LAUNCHER);
  socket.on("error", () => resolve("error"));
  socket.on("data", () => resolve("answered"));
  socket.on("close", () => resolve("closed"));
  socket.write(JSON.stringify({ token: "0".repeat(64), id: "x", role: "control", command: ["/bin/true"], env: {}, cwd: "/" }) + "\n");
});
// A fixture workspace as fixtures/index.ts makes it: group-writable where the sandbox says so.
const workspace = fs.mkdtempSync(shared + "/ws-");
if (process.env.LAB_FIXTURE_GROUP_WRITABLE === "1") fs.chmodSync(workspace, 0o770);
const env = { PATH: process.env.PATH, WORKER_PID: String(process.pid), SHARED: workspace, SCRATCH: scratch, LAB_HOST_LAUNCHER_TOKEN: process.env.LAB_HOST_LAUNCHER_TOKEN };
const sab = new SharedArrayBuffer(8 + 4096);
const worker = new Worker(bridge, { workerData: { sab, command: [process.execPath, hostFile], env, cwd: scratch, maxLine: 1 << 20 } });
let hostPid;
let hostSaid;
worker.on("message", async (m) => {
  if (m.t === "pid") hostPid = m;
  else if (m.t !== "exit") hostSaid = m;
  // (The pid comes on the launcher's control connection, the host's words on fd 3: either first.)
  if (hostPid && hostSaid) {
    const m = hostSaid;
    hostSaid = undefined;
    const inner = Number(fs.readFileSync(workspace + "/pids.txt", "utf8"));
    // The host's descendants, found by their parent pids, named by the host's namespace.
    const all = fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e)).map(Number);
    const tree = new Set([hostPid.pid]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const pid of all) {
        const ppid = Number(/^PPid:\s*(\d+)/m.exec(status(pid))?.[1]);
        if (tree.has(ppid) && !tree.has(pid)) { tree.add(pid); grew = true; }
      }
    }
    const outer = [...tree].find((pid) => nspid(pid)[1] === inner);
    const command = outer && fs.readFileSync("/proc/" + outer + "/cmdline", "utf8");
    // Signals through the launcher: refused for a process outside the host's namespace (this
    // one), done for one inside (the sleeper).
    const control = new Int32Array(sab, 0, 2);
    const viaLauncher = (pid) => {
      Atomics.store(control, 0, 0);
      worker.postMessage({ t: "signal", pid, signal: "SIGKILL" });
      Atomics.wait(control, 0, 0, 10000);
      return JSON.parse(Buffer.from(new Uint8Array(sab, 8, Atomics.load(control, 1))).toString("utf8")).error ?? "ok";
    };
    const signals = { self: viaLauncher(process.pid), sleeper: viaLauncher(outer) };
    // Gone: no status to read (reaped), or a zombie. One read per look, so a zombie reaped
    // between two reads is never taken for a live process.
    const gone = () => { const s = status(outer); return s === "" || /^State:\s*Z/m.test(s); };
    for (let i = 0; i < 500 && !gone(); i += 1) await new Promise((r) => setTimeout(r, 10));
    signals.sleeperGone = gone();
    fs.writeSync(3, JSON.stringify({ host: m, started: hostPid, hostLevels: nspid(hostPid.pid), initLevels: nspid(hostPid.init), sleeper: { outer, command }, fromHost: fs.existsSync(workspace + "/from-host"), refused: await refused, signals }) + "\n");
    process.exit(0);
  }
});
`;

// Three hosts in turn: one exits 7, one SIGTERMs itself, one is stopped through the bridge.
const ENDINGS = String.raw`
const { Worker } = require("node:worker_threads");
const [bridge, scratch] = process.argv.slice(1);
const hosts = {
  exit7: "process.exit(7)",
  term: "process.kill(process.pid, 'SIGTERM'); setInterval(() => {}, 1000)",
  stop: "require('node:fs').writeSync(3, JSON.stringify({ t: 'reply', up: true }) + String.fromCharCode(10)); setInterval(() => {}, 1000)",
};
(async () => {
  const exits = {};
  for (const [name, code] of Object.entries(hosts)) {
    const worker = new Worker(bridge, { workerData: { sab: new SharedArrayBuffer(64), command: [process.execPath, "-e", code], env: { PATH: process.env.PATH }, cwd: scratch, maxLine: 1 << 20 } });
    exits[name] = await new Promise((resolve) => worker.on("message", (m) => {
      if (m.up === true) worker.postMessage({ t: "stop" });
      if (m.t === "exit") resolve({ code: m.code, signal: m.signal });
    }));
    await worker.terminate();
  }
  require("node:fs").writeSync(3, JSON.stringify(exits) + String.fromCharCode(10));
})();
`;

// A payload in a fresh grade folder of its own, its scratch the payload's user's.
function hostingPayload(kind: Kind, name: string, script: string, args: string[]) {
  const gradeDir = join(work, `${name}-${kind}`);
  const scratch = join(gradeDir, "scratch");
  mkdirSync(scratch, { recursive: true });
  chmodSync(work, 0o755);
  chmodSync(gradeDir, 0o755);
  const shared = join(scratch, "fixtures");
  return { gradeDir, scratch, shared, start: (extra: string[]) => startPayload({
    command: [process.execPath, "-e", script, join(ROOT, "labs", "33-mcp-lite", "host", "bridge.mjs"), ...extra, ...args],
    cwd: scratch,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LAB_CLIENT_HOST: "1", LAB_FIXTURE_ROOT: shared },
    input: "",
    ...sandboxOf(kind),
    root: ROOT,
    hide: [],
    gradeDir,
    scratch,
    cpuSeconds: 20,
    scratchFolders: ["fixtures", "home", "cwd"],
  }) };
}

// The payload's fd 3 (one JSON line) and ns-init's report, once the payload exited.
async function outcome(payload: ReturnType<typeof startPayload>) {
  payload.stdin.end();
  let text = "";
  let errors = "";
  payload.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (errors += chunk));
  payload.channel.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  await new Promise((resolve) => payload.child.once("exit", resolve));
  return { seen: text.trim() ? JSON.parse(text.trim()) : errors, report: await payload.report, users: payload.users };
}

describe.skipIf(kinds.length === 0).for(kinds)("the client host launcher (%s)", (kind) => {
  it("passes on how each host ended: an exit code, a signal of its own, a stop from the bridge", { timeout: 60_000 }, async () => {
    const run = hostingPayload(kind, "endings", ENDINGS, []);
    const { seen, report } = await outcome(run.start([run.scratch]));
    expect(report?.setupError).toBeUndefined();
    expect(seen).toEqual({ exit7: { code: 7, signal: null }, term: { code: null, signal: "SIGTERM" }, stop: { code: null, signal: "SIGKILL" } });
    expect(report?.alive).toEqual([]);
  });

  it("starts the host alone in namespaces of its own, its processes still in the worker's sight, and nothing outlives the payload", { timeout: 60_000 }, async () => {
    const run = hostingPayload(kind, "alone", PAYLOAD, []);
    writeFileSync(join(run.gradeDir, "host.js"), HOST);
    const { seen, report, users } = await outcome(run.start([join(run.gradeDir, "host.js"), run.shared, run.scratch]));
    expect(report?.setupError).toBeUndefined();
    // The host: pid 2 of its own namespace (after the init that waits for it), its /proc its
    // own (the init, itself and its child),
    // no sight of the worker, the launcher or its token; of the scratch only the shared folder
    // is the worker's (the other folders are its own, empty).
    expect(seen.host).toMatchObject({ pid: 2, ppid: 1, workerProc: "ENOENT", launcher: "ENOENT", launcherEnv: [], sharedWrite: "ok" });
    expect(seen.host.procs).toBe(3);
    // A user of its own, in the payload's group (as root, or with subordinate ids mapped); in a
    // user namespace without them, the one uid there is.
    expect([seen.host.uid, seen.host.gid]).toEqual(kind === "user" ? [0, 0] : [users!.hostUid, users!.uid]);
    expect(seen.host.name).toBe(kind === "user" ? "root" : "lab-host");
    expect(seen.host.scratch).toEqual(["cwd", "fixtures", "home"]);
    expect(seen.fromHost).toBe(true);
    // The worker: the host's pid in its own view, one level down it is 2; the grandchild found
    // by the pid the host recorded. (And the bridge's own thread id, for the hang clock.)
    expect(seen.started).toEqual({ t: "pid", pid: seen.hostLevels[0], nsPid: 2, init: seen.initLevels[0], bridgeTid: expect.any(Number) });
    expect(seen.hostLevels[1]).toBe(2);
    expect(seen.initLevels[1]).toBe(1);
    expect(seen.sleeper.command).toBe("sleep\u00003141\u0000");
    // The launcher signals for the worker only inside the host's namespace.
    expect(seen.signals).toEqual({ self: "ESRCH", sleeper: "ok", sleeperGone: true });
    // A connection without the token is closed unanswered.
    expect(seen.refused).toBe("closed");
    // The payload exited with its host running: the host's namespace went with it.
    expect(report?.alive).toEqual([]);
    expect(listProcs().filter((p) => isLive(p) && commandLine(p.pid).includes("sleep 3141"))).toEqual([]);
  });
});
