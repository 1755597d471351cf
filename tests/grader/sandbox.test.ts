// The OS sandbox and the result channel on their own (grader/sandbox/): what a payload can
// see and do inside, that nothing it starts outlives it, and that the channel refuses
// forged, replayed and missing records. The corpus (tests/grader/corpus.test.ts) shows the
// same layers against whole hostile submissions.

import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../../grader/cli-main.ts";
import { chooseSandbox, grade, hiddenPaths, ROOT } from "../../grader/grade.ts";
import { isLive, listProcs, commandLine } from "../../grader/procs.ts";
import { readChannel, sign } from "../../grader/sandbox/channel.ts";
import { MAPPED_ID_MIN, NOKEYS, ROOT_ID_BASE, SANDBOX_SCRATCH_BYTES, startPayload } from "../../grader/sandbox/index.ts";
import { kinds, sandboxOf, support } from "./sandbox-kinds.ts";

const work = mkdtempSync(join(tmpdir(), "lab-sandbox-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The project's esbuild binary (what tsx starts as its transform service).
const ESBUILD = join(ROOT, "node_modules", "@esbuild", `${process.platform}-${process.arch}`, "bin", "esbuild");
const ESBUILD_VERSION = (JSON.parse(readFileSync(join(ROOT, "node_modules", "esbuild", "package.json"), "utf8")) as { version: string }).version;

// What the payload reports about its world, as one JSON line on fd 3.
const PROBE = String.raw`
const fs = require("node:fs");
const net = require("node:net");
const { spawn } = require("node:child_process");
const [root, solution, hostMarker, scratch, esbuild, esbuildVersion] = process.argv.slice(1);
// The tooling's helper as tsx starts it (its transform service), still running when the payload
// exits: its input, here, stays open a second longer.
spawn("/bin/sh", ["-c", 'sleep 1 | "$0" --service="$1" --ping >/dev/null', esbuild, esbuildVersion], { stdio: "ignore" });
const tryWrite = (file) => { try { fs.writeFileSync(file, "x"); return "written"; } catch (e) { return e.code; } };
spawn("/bin/sh", ["-c", "cd / && exec sleep 3133 &"], { detached: true, env: {}, stdio: "ignore" }).unref();
const socket = net.connect({ host: "1.1.1.1", port: 80 });
socket.on("error", (e) => report(e.code));
socket.on("connect", () => report("connected"));
function report(network) {
  fs.writeSync(3, JSON.stringify({
    uid: process.getuid(),
    // Named as nobody was (os.userInfo() throws for a uid no passwd line names); no HOME here.
    name: (() => { try { return require("node:os").userInfo().username; } catch (e) { return e.code; } })(),
    homedir: (() => { try { return require("node:os").homedir(); } catch (e) { return e.code; } })(),
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

describe.skipIf(kinds.length === 0).for(kinds)("the OS sandbox (%s)", (kind) => {
  it("runs the payload as a user of its own (or capless) in a read-only project with hidden solutions, a private /tmp, no network, and kills what it left", async () => {
    const gradeDir = join(work, `g-${kind}`);
    const scratch = join(gradeDir, "scratch");
    mkdirSync(scratch, { recursive: true });
    const hostMarker = join(tmpdir(), `lab-sandbox-marker-${process.pid}-${kind}`);
    writeFileSync(hostMarker, "outside");
    const solution = join(ROOT, "labs", "33-mcp-lite", "solution");
    const hide = await hiddenPaths();
    expect(hide).toContain(solution);
    const payload = startPayload({
      command: [process.execPath, "-e", PROBE, ROOT, solution, hostMarker, scratch, ESBUILD, ESBUILD_VERSION],
      cwd: scratch,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      input: "",
      ...sandboxOf(kind),
      root: ROOT,
      hide,
      gradeDir,
      scratch,
      cpuSeconds: 20,
      // (As in the import check: the payload's children are not vitest's workers.)
      childWorkers: false,
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
    // Its own user where it has users: as root one of the range no system assigns; in a user
    // namespace without subordinate ids, the capless uid 0 there.
    if (kind === "user") expect(payload.users).toBeUndefined();
    else expect(payload.users?.hostUid).toBe(payload.users!.uid + 1);
    expect(seen.uid).toBe(kind === "user" ? 0 : payload.users!.uid);
    if (kind === "root") expect(seen.uid).toBeGreaterThanOrEqual(ROOT_ID_BASE);
    expect([seen.name, seen.homedir]).toEqual(kind === "user" ? ["root", "/root"] : ["lab-payload", "/nonexistent"]);
    // No capability left, and none to regain (empty bounding set).
    expect(seen.capabilities).toEqual(["0000000000000000", "0000000000000000"]);
    // ns-init saw the daemon alive when the payload exited; the namespace took it down.
    expect(report?.alive?.map((p) => p.command)).toContain("sleep 3133");
    // The esbuild service, given its moment to end, is not reported.
    expect(report?.alive?.filter((p) => p.command.startsWith(`${ESBUILD} `))).toEqual([]);
    const alive = listProcs().filter((p) => isLive(p) && commandLine(p.pid).includes("sleep 3133"));
    expect(alive).toEqual([]);
  });
});

// Fills the scratch folder, makes SysV IPC objects and leaves records of every kind; reports
// what it managed on fd 3.
const SCRATCH_PROBE = String.raw`
const fs = require("node:fs");
const { execFileSync } = require("node:child_process");
const [scratch] = process.argv.slice(1);
const block = Buffer.alloc(1024 * 1024, 7);
let written = 0;
let stopped = "";
const fd = fs.openSync(scratch + "/fill", "w");
try { for (let i = 0; i < 100; i += 1) written += fs.writeSync(fd, block); } catch (e) { stopped = e.code; }
fs.closeSync(fd);
fs.rmSync(scratch + "/fill");
const shm = execFileSync("ipcmk", ["-M", "31313", "-p", "0601"], { encoding: "utf8" });
fs.writeFileSync(scratch + "/ok.jsonl", '{"fine":true}\n');
execFileSync("mkfifo", [scratch + "/fifo.jsonl"]);
fs.mkdirSync(scratch + "/dir.jsonl");
fs.symlinkSync("/etc/passwd", scratch + "/link.jsonl");
fs.writeSync(3, JSON.stringify({ written, stopped, shm: shm.trim() }) + "\n");
`;

// Starts sleeps until the kernel refuses one, says how many on fd 3, and holds them until its
// stdin ends.
const FILL_PROCESSES = String.raw`
const { spawn } = require("node:child_process");
const kids = [];
(async () => {
  let refused = "";
  for (let i = 0; i < 400 && !refused; i++) {
    const kid = spawn("/bin/sleep", ["300"], { stdio: "ignore" });
    refused = await new Promise((resolve) => { kid.once("spawn", () => resolve("")); kid.once("error", (error) => resolve(error.code || "error")); });
    if (!refused) kids.push(kid);
  }
  require("node:fs").writeSync(3, JSON.stringify({ kids: kids.length, refused }) + "\n");
  process.stdin.on("end", () => { for (const kid of kids) kid.kill("SIGKILL"); process.exit(0); }).resume();
})();
`;

// Users of its own per payload: the kernel counts RLIMIT_NPROC per user on the whole machine,
// so payloads sharing a user (as every grade's did until session 25) share one limit.
describe.skipIf(!kinds.some((kind) => kind !== "user")).for(kinds.filter((kind) => kind !== "user"))("two payloads at once (%s)", (kind) => {
  it("each has users of its own: one that holds every process its limit allows leaves the other free to start more", { timeout: 60_000 }, async () => {
    const start = (name: string, command: string[]) => {
      const gradeDir = join(work, `n-${name}-${kind}`);
      const scratch = join(gradeDir, "scratch");
      mkdirSync(scratch, { recursive: true });
      return startPayload({ command, cwd: scratch, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, input: "", ...sandboxOf(kind), root: ROOT, hide: [], gradeDir, scratch, cpuSeconds: 20, childWorkers: false, processes: 64 });
    };
    const firstLine = (payload: ReturnType<typeof startPayload>) =>
      new Promise<string>((resolve) => {
        let text = "";
        payload.channel.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
          if (text.includes("\n")) resolve(text.split("\n")[0]!);
        });
        payload.channel.once("end", () => resolve(text));
      });
    const full = start("full", [process.execPath, "-e", FILL_PROCESSES]);
    const filled = JSON.parse(await firstLine(full)) as { kids: number; refused: string };
    // The limit stopped it (node's own threads count too), well short of 400.
    expect(filled.refused).toBe("EAGAIN");
    expect(filled.kids).toBeGreaterThan(10);
    expect(filled.kids).toBeLessThan(64);
    const other = start("other", ["/bin/sh", "-c", "/bin/sleep 0 && /bin/sleep 0 && echo forked >&3"]);
    const said = await firstLine(other);
    await new Promise((resolve) => other.child.once("exit", resolve));
    full.stdin.end();
    await new Promise((resolve) => full.child.once("exit", resolve));
    expect(said).toBe("forked");
    expect(other.users!.uid).not.toBe(full.users!.uid);
    expect([other.users!.uid, other.users!.hostUid]).not.toContain(full.users!.hostUid);
  });

  it("never gives two payloads of one process the same users, even when both are started before either runs", { timeout: 60_000 }, async () => {
    // Both draws land on the same pair: the second payload must draw again.
    let draws = 0;
    const random = vi.spyOn(Math, "random").mockImplementation(() => [0.3, 0.3, 0.6][Math.min(draws++, 2)]!);
    let payloads: Array<ReturnType<typeof startPayload>>;
    try {
      payloads = ["a", "b"].map((name) => {
        const gradeDir = join(work, `same-${name}-${kind}`);
        mkdirSync(join(gradeDir, "scratch"), { recursive: true });
        return startPayload({ command: ["/bin/sh", "-c", "id -u >&3"], cwd: join(gradeDir, "scratch"), env: { PATH: "/usr/bin:/bin" }, input: "", ...sandboxOf(kind), root: ROOT, hide: [], gradeDir, scratch: join(gradeDir, "scratch"), cpuSeconds: 20, childWorkers: false });
      });
    } finally {
      random.mockRestore();
    }
    const seen = await Promise.all(payloads.map(async (payload) => {
      payload.stdin.end();
      let text = "";
      payload.channel.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      await new Promise((resolve) => payload.channel.once("end", resolve));
      await new Promise((resolve) => (payload.child.exitCode !== null || payload.child.signalCode !== null ? resolve(null) : payload.child.once("exit", resolve)));
      return Number(text.trim());
    }));
    expect(draws).toBe(3);
    expect(seen).toEqual(payloads.map((payload) => payload.users!.uid));
    expect(seen[0]).not.toBe(seen[1]);
  });
});

// Kernel keys, through the keyctl system calls (x86-64 numbers). "add": a key in the user's
// keyring that every user may view, read and change (permissions 0x3f3f3f3f), as a grade that
// wanted to leave a message would make it. "find": the key as /proc/keys lists it, whoever
// owns it, and its text read. "drop": invalidate it. Each prints what happened, or the errno's name.
const KEYS = String.raw`
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
name = "lab-sandbox-test-key"
def failed():
    print(errno.errorcode.get(ctypes.get_errno(), "?"))
    sys.exit(0)
def listed():
    # Live keys only: one revoked (R), dead (D) or invalidated (i) stays listed until the
    # kernel's key collector, which runs on its own schedule, takes it away.
    for line in open("/proc/keys"):
        fields = line.split(None, 8)
        if len(fields) == 9 and fields[8].startswith(name + ":") and not set(fields[1]) & set("RDi"):
            yield int(fields[0], 16)
if sys.argv[1] == "add":
    key = libc.syscall(248, b"user", name.encode(), b"left by an earlier payload", 26, -4)
    if key < 0 or libc.syscall(250, 5, key, 0x3f3f3f3f) < 0: failed()
    print("added")
else:
    keys = list(listed())
    key = keys[0] if keys else None
    if key is None:
        print("none")
    elif sys.argv[1] == "drop":
        print("dropped" if all(libc.syscall(250, 21, each) == 0 for each in keys) else "kept")
    else:
        buffer = ctypes.create_string_buffer(64)
        if libc.syscall(250, 11, key, buffer, 64) < 0: failed()
        print(buffer.value.decode())
`;
const PYTHON = "/usr/bin/python3";

// Kernel keys outlive the processes that made them (a user's keyrings stay until reboot), and
// one whose permissions let others read it is listed in /proc/keys and readable by every user:
// users of its own per payload do not keep one grade from leaving a message for the grades
// beside it or after it there. The sandbox starts under lab-nokeys, which refuses the calls.
// `npm ci` builds lab-nokeys wherever it can compile C (scripts/build-native.mjs).
it.skipIf(process.platform !== "linux" || spawnSync("cc", ["--version"]).status !== 0)("has lab-nokeys built, since this machine has a C compiler", () => {
  expect(existsSync(NOKEYS)).toBe(true);
});

describe.skipIf(!kinds.includes("root") || process.arch !== "x64" || !existsSync(PYTHON) || !existsSync(NOKEYS))("payloads one after another (root)", () => {
  it("reach no kernel key: none can be added in the sandbox, and one left by a payload with the calls allowed is not read", { timeout: 60_000 }, async () => {
    const run = async (name: string, verb: string, keys?: "allowed") => {
      const gradeDir = join(work, `key-${name}`);
      mkdirSync(join(gradeDir, "scratch"), { recursive: true });
      const payload = startPayload({ command: [PYTHON, "-c", KEYS, verb], cwd: join(gradeDir, "scratch"), env: { PATH: "/usr/bin:/bin" }, input: "", sandbox: "root", root: ROOT, hide: [], gradeDir, scratch: join(gradeDir, "scratch"), cpuSeconds: 20, childWorkers: false, ...(keys ? { keys } : {}) });
      payload.stdin.end();
      let text = "";
      payload.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      await new Promise((resolve) => payload.child.once("close", resolve));
      return text.trim();
    };
    try {
      expect(await run("writer", "add")).toBe("ENOSYS");
      // What it stops, on this kernel: with the calls allowed, as before, a payload's key is
      // read by the next payload, another user.
      expect(await run("open-writer", "add", "allowed")).toBe("added");
      expect(await run("open-reader", "find", "allowed")).toBe("left by an earlier payload");
      expect(await run("reader", "find")).toBe("ENOSYS");
    } finally {
      // Root reads /proc/keys as "other" too: the keys the payloads left open go.
      spawnSync(PYTHON, ["-c", KEYS, "drop"]);
    }
    expect(spawnSync(PYTHON, ["-c", KEYS, "find"], { encoding: "utf8" }).stdout.trim()).toBe("none");
  });
});

describe.skipIf(kinds.length === 0).for(kinds)("the sandbox's scratch and IPC (%s)", (kind) => {
  it("caps the scratch tmpfs, keeps SysV IPC inside, and sends back only the regular records", async () => {
    const gradeDir = join(work, `s-${kind}`);
    const scratch = join(gradeDir, "scratch");
    mkdirSync(scratch, { recursive: true });
    const payload = startPayload({
      command: [process.execPath, "-e", SCRATCH_PROBE, scratch],
      cwd: scratch,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      input: "",
      ...sandboxOf(kind),
      root: ROOT,
      hide: [],
      gradeDir,
      scratch,
      cpuSeconds: 20,
      scratchFolders: ["home"],
      records: ["ok.jsonl", "fifo.jsonl", "dir.jsonl", "link.jsonl", "none.jsonl"],
    });
    payload.stdin.end();
    let text = "";
    payload.channel.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    await new Promise((resolve) => payload.child.once("exit", resolve));
    const report = await payload.report;
    const seen = JSON.parse(text.trim()) as { written: number; stopped: string; shm: string };
    // The tmpfs (or RLIMIT_FSIZE) stopped the writer at its cap, and nothing reached the host.
    expect(seen.written).toBeLessThanOrEqual(SANDBOX_SCRATCH_BYTES);
    expect(["ENOSPC", "EFBIG"]).toContain(seen.stopped);
    expect(readdirSync(scratch)).toEqual([]);
    expect(report?.records).toEqual({
      "ok.jsonl": { ok: true, text: '{"fine":true}\n' },
      "fifo.jsonl": { ok: false, refusal: "fifo" },
      "dir.jsonl": { ok: false, refusal: "folder" },
      "link.jsonl": { ok: false, refusal: "symlink" },
      "none.jsonl": { ok: true, text: "", missing: true },
    });
    // The shared memory segment went with the sandbox's IPC namespace.
    expect(seen.shm).toMatch(/Shared memory id/);
    expect(readFileSync("/proc/sysvipc/shm", "utf8").split("\n").filter((line) => / 31313 /.test(line))).toEqual([]);
  });
});

describe.skipIf(kinds.length === 0)("Node installed under the temp dir", () => {
  it("runs in the sandbox all the same (its prefix bound through an fd, after the sandbox's own /tmp)", { timeout: 60_000 }, () => {
    const prefix = join(work, "node-under-tmp");
    mkdirSync(join(prefix, "bin"), { recursive: true });
    const node = join(prefix, "bin", "node");
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
    const driver = join(work, "node-under-tmp.mjs");
    writeFileSync(driver, NODE_UNDER_TMP);
    const tsx = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
    const out = spawnSync(node, ["--import", tsx, driver, join(ROOT, "grader", "sandbox", "index.ts"), ROOT, work, kinds[0]!], { encoding: "utf8", timeout: 50_000 });
    expect(out.stderr).toBe("");
    expect(JSON.parse(out.stdout)).toEqual({ channel: `ran ${node}\n`, setupError: null });
  });
});

// As root of a user namespace that maps only 65 536 ids (a container's, often): the ids a root
// payload takes elsewhere are not mapped there, and a tmpfs or setpriv naming them fails.
const CONTAINER = String.raw`
unshare --user sleep 600 & holder=$!
while [ "$(readlink /proc/$holder/ns/user)" = "$(readlink /proc/self/ns/user)" ]; do sleep 0.01; done
echo "0 100000 65536" > /proc/$holder/uid_map && echo "0 100000 65536" > /proc/$holder/gid_map &&
nsenter --user --target $holder --setuid 0 --setgid 0 -- unshare --mount --pid --fork --mount-proc "$@"
rc=$?
kill $holder
exit $rc
`;
describe.skipIf(!kinds.includes("root") || !existsSync("/usr/bin/nsenter"))("a grader that is root of a container's user namespace", () => {
  it("gives each payload users of its own among the ids that namespace maps", { timeout: 60_000 }, () => {
    const dir = join(work, "container");
    mkdirSync(dir, { recursive: true });
    chmodSync(work, 0o755);
    chmodSync(dir, 0o777);
    const driver = join(dir, "container.mjs");
    writeFileSync(driver, IN_CONTAINER);
    const tsx = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
    const out = spawnSync("/bin/sh", ["-c", CONTAINER, "container", process.execPath, "--import", tsx, driver, join(ROOT, "grader", "sandbox", "index.ts"), ROOT, dir], { encoding: "utf8", timeout: 50_000 });
    expect(out.stderr).toBe("");
    const seen = JSON.parse(out.stdout) as { kind: string; uid: number; users: { uid: number; hostUid: number }; setupError: string | null };
    expect(seen).toMatchObject({ kind: "root", setupError: null });
    expect(seen.uid).toBe(seen.users.uid);
    expect(seen.users.hostUid).toBe(seen.users.uid + 1);
    expect(seen.uid).toBeGreaterThanOrEqual(MAPPED_ID_MIN);
    expect(seen.users.hostUid).toBeLessThan(65_534);
  });
});

// Run as root of that namespace: one payload, which says its uid.
const IN_CONTAINER = String.raw`
import { mkdirSync } from "node:fs";
const [index, root, dir] = process.argv.slice(2);
const { sandboxSupport, startPayload } = await import(index);
const gradeDir = dir + "/g";
mkdirSync(gradeDir + "/scratch", { recursive: true });
const kind = sandboxSupport().kind;
const payload = startPayload({
  command: [process.execPath, "-e", "require('node:fs').writeSync(3, String(process.getuid()))"],
  cwd: gradeDir + "/scratch", env: { PATH: "/usr/bin:/bin" }, input: "", sandbox: kind, root, hide: [], gradeDir, scratch: gradeDir + "/scratch", cpuSeconds: 20,
});
payload.stdin.end();
let channel = "";
payload.child.stdout.resume();
payload.child.stderr.resume();
payload.channel.setEncoding("utf8").on("data", (c) => (channel += c));
await new Promise((r) => payload.child.once("exit", r));
const report = await payload.report;
process.stdout.write(JSON.stringify({ kind, uid: Number(channel), users: payload.users, setupError: report?.setupError ?? null }));
`;

// Run by a Node under /tmp: one payload of that same Node in the sandbox.
const NODE_UNDER_TMP = String.raw`
import { mkdirSync } from "node:fs";
const [index, root, work, kind] = process.argv.slice(2);
const { startPayload } = await import(index);
const gradeDir = work + "/node-g";
mkdirSync(gradeDir + "/scratch", { recursive: true });
const payload = startPayload({
  command: [process.execPath, "-e", "require('node:fs').writeSync(3, 'ran ' + process.execPath + String.fromCharCode(10))"],
  cwd: gradeDir + "/scratch", env: { PATH: "/usr/bin:/bin" }, input: "", sandbox: kind, root, hide: [], gradeDir, scratch: gradeDir + "/scratch", cpuSeconds: 20,
});
payload.stdin.end();
let channel = "";
let output = "";
payload.child.stdout.on("data", (c) => (output += c));
payload.child.stderr.on("data", (c) => (output += c));
payload.channel.setEncoding("utf8").on("data", (c) => (channel += c));
const closed = new Promise((r) => payload.channel.once("close", r));
await new Promise((r) => payload.child.once("exit", r));
const report = await payload.report;
await closed;
console.log(JSON.stringify({ channel, setupError: report?.setupError ?? null, ...(channel ? {} : { output, report }) }));
`;

describe.skipIf(kinds.length === 0)("a sandbox that cannot be set up", () => {
  // A mount that fails for ns-init's staging tmpfs only (the machine's probe still passes).
  const fakeBin = join(work, "fake-bin");
  mkdirSync(fakeBin, { recursive: true });
  writeFileSync(join(fakeBin, "mount"), '#!/bin/sh\ncase "$*" in *lab-stage*) echo "mount: refused by the test" >&2; exit 32;; esac\nexec /usr/bin/mount "$@"\n', { mode: 0o755 });
  const cli = (mode: string) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "grader", "cli.ts"), "--submission", join(ROOT, "labs", "33-mcp-lite", "corpus", "missing-export"), "--lang", "en", "--format", "json", "--sandbox", mode], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, PATH: `${fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}` },
      timeout: 120_000,
    });

  it("counts as no sandbox under auto (one line on stderr), and refuses to grade under required (exit 2)", { timeout: 240_000 }, () => {
    const auto = cli("auto");
    expect(auto.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^note: the grading sandbox could not be set up \(.*refused by the test.*\); grading without it/)]);
    expect(auto.status).toBe(2);
    expect(JSON.parse(auto.stdout).message).toMatch(/does not export McpError/);
    const required = cli("required");
    expect(required.status).toBe(2);
    expect(JSON.parse(required.stdout).message).toMatch(/the grading sandbox could not be set up: .*refused by the test/);
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

  it("reads a record split over many chunks and several records in one chunk alike", async () => {
    const long = line({ seq: 0, event: "end", text: "x".repeat(300_000) });
    const pieces = Array.from({ length: 40 }, (_, i) => long.slice((i * long.length) / 40, ((i + 1) * long.length) / 40));
    const reader = await read([...pieces.slice(0, -1), pieces.at(-1)! + line({ seq: 1, event: "start" }) + line({ seq: 2, event: "done" }).slice(0, 10), line({ seq: 2, event: "done" }).slice(10)]);
    expect(reader.tampered).toBeUndefined();
    expect(reader.records.map((r) => r.event)).toEqual(["end", "start", "done"]);
    expect((reader.records[0] as { text: string }).text).toHaveLength(300_000);
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
