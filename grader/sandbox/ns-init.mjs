// @ts-check
// First process (pid 1) of a grade's sandbox: `unshare --pid --fork --mount-proc --net --mount
// [--user --map-root-user] --kill-child node ns-init.mjs`. It reads one line of JSON on stdin
// ({ config }), builds a private root from read-only bind mounts (the system folders, the
// project tree with its hidden folders covered, the grade's folder) plus a size-capped /tmp,
// then runs the payload in it with an unprivileged identity and resource limits, passing the
// rest of its stdin on to the payload's. Fd 3 is passed through to the payload (the result
// channel); fd 4 is this process's own report to the outer grader, which the payload never
// gets. When the payload exits it reports the processes still alive in the namespace (vitest's
// own workers excepted, known by identity: direct children of the payload) and exits, and
// the kernel kills everything left in the namespace. The payload's one writable folder, the
// scratch, is a size-capped tmpfs of this namespace: before exiting, ns-init reads back the
// records the grader asked for (config.records) without trusting them (../safe-fs.mjs) and
// sends them in its report. Where the run hosts its client (LAB_CLIENT_HOST), ns-init also
// builds the client host's root and serves the workers' requests for hosts, each in PID and
// mount namespaces of its own (host-launcher.mjs); the hosts die with the payload at the latest.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, readlinkSync, readSync, writeFileSync, writeSync } from "node:fs";
import { readRecordFile } from "../safe-fs.mjs";
import { LAUNCHER_ENV, LAUNCHER_TOKEN_ENV, startLauncher } from "./host-launcher.mjs";
import { closeInheritedFds } from "./inherited-fds.mjs";
import { CHROOT, confinedArgs, HOST_ROOT, IDENTITY_DIR, LAUNCHER_DIR, NEW_ROOT, openFolders, rootScript } from "./ns-root.mjs";

/** @typedef {import("./ns-root.mjs").Config} Config */

const REPORT_FD = 4;
// Whatever else reached this process open across exec (from the grader's caller, through the
// grader, setpriv and unshare) goes before anything starts: every process of the sandbox, the
// payload's, the client hosts' and all they start, descends from this one (inherited-fds.mjs).
closeInheritedFds([3, REPORT_FD]);
const report = (/** @type {object} */ record) => {
  try {
    writeSync(REPORT_FD, `${JSON.stringify(record)}\n`);
  } catch {
    // The outer grader is gone.
  }
};

// Stdin: one line of JSON ({ config }), then the payload's input, passed on as it comes.
let head = Buffer.alloc(0);
let newline = -1;
while (newline === -1) {
  const chunk = Buffer.alloc(65536);
  let n = 0;
  try {
    n = readSync(0, chunk, 0, chunk.length, null);
  } catch (error) {
    if (/** @type {any} */ (error).code === "EAGAIN") continue;
    throw error;
  }
  if (n === 0) break;
  head = Buffer.concat([head, chunk.subarray(0, n)]);
  newline = head.indexOf(10);
}
/** @type {{ config: Config }} */
const { config } = JSON.parse(head.subarray(0, newline === -1 ? head.length : newline).toString("utf8"));
const early = newline === -1 ? Buffer.alloc(0) : head.subarray(newline + 1);

// The roots are small tmpfs mounts on a staging tmpfs on /tmp (which it also hides); host
// folders reached through directory fds opened before it was mounted (ns-root.mjs).
/** @type {ReturnType<typeof openFolders>} */
let fds;
try {
  fds = openFolders(config);
} catch (error) {
  report({ setupError: String(error).slice(0, 2000) });
  process.exit(70);
}
const hosting = config.hostShared.length > 0 || config.env.LAB_CLIENT_HOST === "1";
const sh = ["set -e", ...rootScript(NEW_ROOT, config, fds)];
if (hosting) sh.push(...rootScript(HOST_ROOT, config, fds, true));

try {
  // The staging tmpfs first, then the identity files on it (ns-root.mjs), then the roots.
  execFileSync("/bin/sh", ["-c", "mount -t tmpfs -o size=1m,mode=755 lab-stage /tmp"], { stdio: ["ignore", "ignore", "pipe"] });
  if (fds.identity) {
    mkdirSync(IDENTITY_DIR, { mode: 0o755 });
    writeFileSync(`${IDENTITY_DIR}/passwd`, fds.identity.passwd, { mode: 0o644 });
    writeFileSync(`${IDENTITY_DIR}/group`, fds.identity.group, { mode: 0o644 });
  }
  execFileSync("/bin/sh", ["-c", sh.join("\n")], { stdio: ["ignore", "ignore", "pipe"] });
} catch (error) {
  report({ setupError: String(/** @type {any} */ (error).stderr ?? error).slice(0, 2000) });
  process.exit(70);
}

// The client host launcher (host-launcher.mjs), where the run hosts clients: its socket in
// the payload's root, its token in the payload's environment only.
const env = { ...config.env };
/** @type {Awaited<ReturnType<typeof startLauncher>> | undefined} */
let launcher;
if (hosting) {
  const socket = `${LAUNCHER_DIR}/launcher.sock`;
  const token = randomBytes(32).toString("hex");
  try {
    launcher = await startLauncher(config, `${NEW_ROOT}${socket}`, token);
    if (config.mode === "root") chownSync(`${NEW_ROOT}${socket}`, config.uid, config.uid);
    chmodSync(`${NEW_ROOT}${socket}`, 0o600);
  } catch (error) {
    report({ setupError: `client host launcher: ${String(error).slice(0, 2000)}` });
    process.exit(70);
  }
  env[LAUNCHER_ENV] = socket;
  env[LAUNCHER_TOKEN_ENV] = token;
  // The hosts' own user (root mode) writes into the fixture folders by the payload's group.
  if (config.hostUid !== config.uid) env.LAB_FIXTURE_GROUP_WRITABLE = "1";
}

const args = [NEW_ROOT, ...confinedArgs(config, config.command, config.cwd)];
const chroot = CHROOT;
// stdin: the payload's input; 1, 2: shared output; 3: the result channel; 4: /dev/null (not our report).
const child = spawn(chroot, args, { env, stdio: ["pipe", "inherit", "inherit", 3, "ignore"] });
child.stdin?.on("error", () => {});
if (early.length > 0) child.stdin?.write(early);
if (child.stdin) process.stdin.pipe(child.stdin);

/** @returns {Array<{ pid: number, ppid: number, state: string }>} */
function processes() {
  const out = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || entry === "1") continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(entry), ppid: Number(fields[1]), state: fields[0] ?? "?" });
    } catch {
      // Gone.
    }
  }
  return out;
}
const commandOf = (/** @type {number} */ pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ").slice(0, 300);
  } catch {
    return "?";
  }
};
// vitest's workers: the payload's direct children, where the payload does not load submission
// code itself (config.childWorkers). In the import check it does: a helper the submission
// starts there is the payload's child until the payload exits, and must be reported.
const workers = new Set();
// The tooling's own helper processes: tsx's esbuild service in the import check, started by
// the payload, ends once the payload's pipe to it closes, a moment after the payload exits.
// Known by its program, a binary of the project's node_modules (mounted read-only: nothing of
// the submission's can be there); a submission that starts it too gains nothing, since it
// ends with its pipe as well, and one still running after its grace is reported like any other.
const TOOLING_EXE = /\/node_modules\/(?:@esbuild\/[^/]+\/bin\/esbuild|esbuild\/bin\/esbuild)$/;
const TOOLING_GRACE_MS = 5_000;
const isTooling = (/** @type {number} */ pid) => {
  try {
    return TOOLING_EXE.test(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    return false;
  }
};
const watch = () => {
  if (config.childWorkers === false) return;
  for (const p of processes()) if (p.ppid === child.pid) workers.add(p.pid);
};
const scanner = setInterval(watch, 100);

// The records the grader asked for, from the scratch tmpfs: never through a link, never
// blocking, regular files of bounded size (anything else is named as a refusal).
function scratchRecords() {
  /** @type {Record<string, import("../safe-fs.mjs").RecordRead>} */
  const out = {};
  for (const name of config.records) out[name] = readRecordFile(`${NEW_ROOT}${config.scratch}/${name}`);
  return out;
}

child.on("exit", async (code, signal) => {
  clearInterval(scanner);
  // The client hosts die with their workers; any still running go now, with their namespaces.
  if (launcher) await Promise.race([launcher.killAll(), new Promise((r) => setTimeout(r, 2_000))]);
  launcher?.server.close();
  const live = () => processes().filter((p) => p.state !== "Z" && p.state !== "X");
  // Give the workers a moment to finish exiting, and the tooling's own helpers (below) up to
  // TOOLING_GRACE_MS; anything else is reported at once, a helper still running after its grace too.
  const now = live().filter((p) => !workers.has(p.pid));
  const tooling = new Set(now.filter((p) => isTooling(p.pid)).map((p) => p.pid));
  const alive = now.filter((p) => !tooling.has(p.pid)).map((p) => ({ pid: p.pid, command: commandOf(p.pid) }));
  for (let i = 0; i < 50 && live().some((p) => workers.has(p.pid)); i += 1) await new Promise((r) => setTimeout(r, 10));
  const until = Date.now() + TOOLING_GRACE_MS;
  while (Date.now() < until && live().some((p) => tooling.has(p.pid))) await new Promise((r) => setTimeout(r, 10));
  for (const p of live()) if (tooling.has(p.pid)) alive.push({ pid: p.pid, command: commandOf(p.pid) });
  report({ exit: { code, signal }, alive, records: scratchRecords() });
  process.exit(0);
});
