// The sandbox's client host launcher (grader/sandbox/host-launcher.mjs) on its own: a payload
// that hosts its client (LAB_CLIENT_HOST=1) starts a host through the lab's bridge
// (labs/33-mcp-lite/host/bridge.mjs), which uses the launcher the sandbox offers. The host
// must find itself alone in PID and mount namespaces of its own (its /proc, no launcher
// socket or token, only the shared fixture folder of the scratch), the worker must still see
// the host's processes under their own pids, a connection without the token gets nothing,
// and nothing the host started outlives the payload.

import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../grader/grade.ts";
import { commandLine, isLive, listProcs } from "../../grader/procs.ts";
import { SANDBOX_UID, sandboxSupport, startPayload } from "../../grader/sandbox/index.ts";

const work = mkdtempSync(join(tmpdir(), "lab-sandbox-host-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const support = sandboxSupport();
const userNamespaces =
  process.platform === "linux" && spawnSync("/usr/bin/unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount", "/bin/true"], { timeout: 5_000 }).status === 0;
const kinds = [...(support.kind === "root" ? (["root"] as const) : []), ...(userNamespaces ? (["user"] as const) : [])];

// The client host: what it can see and reach, then a grandchild (`sleep 3141`) whose pid goes
// into the shared fixture folder, then its report on fd 3. It never exits by itself.
const HOST = String.raw`
const fs = require("node:fs");
const { spawn } = require("node:child_process");
const { WORKER_PID, SHARED, SCRATCH } = process.env;
const attempt = (fn) => { try { fn(); return "ok"; } catch (e) { return e.code; } };
const sleeper = spawn("/bin/sh", ["-c", "exec sleep 3141"], { stdio: "ignore" });
fs.writeFileSync(SHARED + "/pids.txt", String(sleeper.pid));
fs.writeSync(3, JSON.stringify({
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
const env = { PATH: process.env.PATH, WORKER_PID: String(process.pid), SHARED: shared, SCRATCH: scratch, LAB_HOST_LAUNCHER_TOKEN: process.env.LAB_HOST_LAUNCHER_TOKEN };
const worker = new Worker(bridge, { workerData: { sab: new SharedArrayBuffer(64), command: [process.execPath, hostFile], env, cwd: scratch, maxLine: 1 << 20 } });
let hostPid;
let hostSaid;
worker.on("message", async (m) => {
  if (m.t === "pid") hostPid = m;
  else if (m.t !== "exit") hostSaid = m;
  // (The pid comes on the launcher's control connection, the host's words on fd 3: either first.)
  if (hostPid && hostSaid) {
    const m = hostSaid;
    hostSaid = undefined;
    const inner = Number(fs.readFileSync(shared + "/pids.txt", "utf8"));
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
    fs.writeSync(3, JSON.stringify({ host: m, started: hostPid, hostLevels: nspid(hostPid.pid), sleeper: { outer, command: outer && fs.readFileSync("/proc/" + outer + "/cmdline", "utf8") }, fromHost: fs.existsSync(shared + "/from-host"), refused: await refused }) + "\n");
    process.exit(0);
  }
});
`;

describe.skipIf(kinds.length === 0).for(kinds)("the client host launcher (%s)", (kind) => {
  it("starts the host alone in namespaces of its own, its processes still in the worker's sight, and nothing outlives the payload", { timeout: 60_000 }, async () => {
    const gradeDir = join(work, `g-${kind}`);
    const scratch = join(gradeDir, "scratch");
    mkdirSync(scratch, { recursive: true });
    chmodSync(work, 0o755);
    chmodSync(gradeDir, 0o755);
    if (kind === "root") chownSync(scratch, SANDBOX_UID, SANDBOX_UID);
    writeFileSync(join(gradeDir, "host.js"), HOST);
    const shared = join(scratch, "fixtures");
    const payload = startPayload({
      command: [process.execPath, "-e", PAYLOAD, join(ROOT, "labs", "33-mcp-lite", "host", "bridge.mjs"), join(gradeDir, "host.js"), shared, scratch],
      cwd: scratch,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LAB_CLIENT_HOST: "1", LAB_FIXTURE_ROOT: shared },
      input: "",
      sandbox: kind,
      root: ROOT,
      hide: [],
      gradeDir,
      scratch,
      cpuSeconds: 20,
      scratchFolders: ["fixtures", "home", "cwd"],
    });
    payload.stdin.end();
    let text = "";
    payload.channel.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    await new Promise((resolve) => payload.child.once("exit", resolve));
    const report = await payload.report;
    expect(report?.setupError).toBeUndefined();
    const seen = JSON.parse(text.trim());
    // The host: first process of its own namespace, its /proc its own (itself and its child),
    // no sight of the worker, the launcher or its token; of the scratch only the shared folder
    // is the worker's (the other folders are its own, empty).
    expect(seen.host).toMatchObject({ pid: 1, ppid: 0, workerProc: "ENOENT", launcher: "ENOENT", launcherEnv: [], sharedWrite: "ok" });
    expect(seen.host.procs).toBe(2);
    expect(seen.host.scratch).toEqual(["cwd", "fixtures", "home"]);
    expect(seen.fromHost).toBe(true);
    // The worker: the host's pid in its own view, one level down it is 1; the grandchild found
    // by the pid the host recorded.
    expect(seen.started).toEqual({ t: "pid", pid: seen.hostLevels[0], nsPid: 1 });
    expect(seen.hostLevels[1]).toBe(1);
    expect(seen.sleeper.command).toContain("sleep\u00003141");
    // A connection without the token is closed unanswered.
    expect(seen.refused).toBe("closed");
    // The payload exited with its host running: the host's namespace went with it.
    expect(report?.alive).toEqual([]);
    expect(listProcs().filter((p) => isLive(p) && commandLine(p.pid).includes("sleep 3141"))).toEqual([]);
  });
});
