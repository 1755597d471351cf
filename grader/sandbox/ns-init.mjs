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
// sends them in its report.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, realpathSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { readRecordFile } from "../safe-fs.mjs";

/** @typedef {{ root: string, also: string[], gradeDir: string, scratch: string, hide: string[], mode: "root" | "user",
 *  uid: number, command: string[], cwd: string, env: Record<string,string>, tmpBytes: number,
 *  scratchBytes: number, inodes: number, scratchFolders: string[], records: string[],
 *  limits: { cpuSeconds: number, dataBytes: number, processes: number, fileBytes: number } }} Config */

const REPORT_FD = 4;
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
const q = (/** @type {string} */ s) => `'${s.replaceAll("'", "'\\''")}'`;

// The new root is a small tmpfs on /tmp (which it also hides); host folders reached through
// directory fds opened before it was mounted.
const NEW_ROOT = "/tmp/.lab-root";
const fdOf = (/** @type {string} */ dir) => `/proc/${process.pid}/fd/${openSync(dir, "r")}`;
/** Node's own prefix (its binary, for a Node installed anywhere, /tmp included). */
const nodePrefix = dirname(dirname(realpathSync(process.execPath)));
// A prefix that would also show the grade's folders (node in /tmp/bin): just the binary.
const nodeBind = nodePrefix === "/" || `${config.gradeDir}/`.startsWith(`${nodePrefix}/`) ? realpathSync(process.execPath) : nodePrefix;
/** @type {{ rootFd: string, alsoFds: Array<{ dir: string, fd: string }>, gradeFd: string, nodeFd: string }} */
let fds;
try {
  fds = { rootFd: fdOf(config.root), alsoFds: config.also.map((dir) => ({ dir, fd: fdOf(dir) })), gradeFd: fdOf(config.gradeDir), nodeFd: fdOf(nodeBind) };
} catch (error) {
  report({ setupError: String(error).slice(0, 2000) });
  process.exit(70);
}
const { rootFd, alsoFds, gradeFd, nodeFd } = fds;
const sh = ["set -e", `mount -t tmpfs -o size=1m,mode=755 lab-stage /tmp`, `mkdir ${NEW_ROOT}`, `mount -t tmpfs -o size=4m,mode=755 lab-root ${NEW_ROOT}`];
const R = (/** @type {string} */ p) => q(`${NEW_ROOT}${p}`);
/** @type {string[]} */
const bound = [];
// System folders, read-only; symlinks (merged /usr) recreated as symlinks.
for (const top of ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]) {
  if (!existsSync(top) || bound.some((b) => top === b || top.startsWith(`${b}/`))) continue;
  const st = lstatSync(top);
  if (st.isSymbolicLink()) sh.push(`mkdir -p ${q(dirname(`${NEW_ROOT}${top}`))}`, `ln -s ${q(readlinkSync(top))} ${R(top)}`);
  else if (st.isDirectory()) sh.push(`mkdir -p ${R(top)}`, `mount --bind -o ro ${q(top)} ${R(top)}`);
  bound.push(top);
}
sh.push(`mkdir ${R("/dev")} ${R("/proc")} ${R("/tmp")}`);
sh.push(`mount --rbind /dev ${R("/dev")}`);
if (existsSync("/dev/shm")) sh.push(`mount -t tmpfs -o size=1m,mode=1777 lab-shm ${R("/dev/shm")}`);
sh.push(`mount -t proc proc ${R("/proc")}`);
sh.push(`mount -t tmpfs -o size=${config.tmpBytes},nr_inodes=${config.inodes},mode=1777,nosuid,nodev lab-tmp ${R("/tmp")}`);
// Node's prefix where the system folders do not hold it, bound through its fd after the new
// /tmp (a Node under /tmp is neither hidden by the staging tmpfs nor covered by the new /tmp).
if (!bound.some((b) => nodeBind === b || nodeBind.startsWith(`${b}/`))) {
  const file = nodeBind !== nodePrefix;
  sh.push(file ? `mkdir -p ${q(dirname(`${NEW_ROOT}${nodeBind}`))} && touch ${R(nodeBind)}` : `mkdir -p ${R(nodeBind)}`);
  sh.push(`mount --bind -o ro ${nodeFd} ${R(nodeBind)}`);
}
// The project, read-only, with the hidden folders (solutions, corpus, .git, ...) covered.
sh.push(`mkdir -p ${R(config.root)}`, `mount --bind -o ro ${rootFd} ${R(config.root)}`);
for (const hidden of config.hide) {
  if (!existsSync(hidden)) continue;
  if (lstatSync(hidden).isDirectory()) sh.push(`mount -t tmpfs -o ro,size=4k,mode=755 lab-hidden ${R(hidden)}`);
  else sh.push(`mount --bind -o ro /dev/null ${R(hidden)}`);
}
// The project's dependencies, read-only, where they live outside it (a symlinked node_modules).
for (const { dir, fd } of alsoFds) sh.push(`mkdir -p ${R(dir)}`, `mount --bind -o ro ${fd} ${R(dir)}`);
// The grade's folder read-only (the submission copy); its scratch folder a size-capped tmpfs
// owned by the payload's user, with the folders the payload expects.
sh.push(`mkdir -p ${R(config.gradeDir)}`, `mount --bind -o ro ${gradeFd} ${R(config.gradeDir)}`);
const owner = config.mode === "root" ? `,uid=${config.uid},gid=${config.uid}` : "";
sh.push(`mount -t tmpfs -o size=${config.scratchBytes},nr_inodes=${config.inodes},mode=755,nosuid,nodev${owner} lab-scratch ${R(config.scratch)}`);
for (const folder of config.scratchFolders) {
  sh.push(`mkdir -p ${R(`${config.scratch}/${folder}`)}`);
  if (config.mode === "root") sh.push(`chown ${config.uid}:${config.uid} ${R(`${config.scratch}/${folder}`)}`);
}
sh.push(`mount -o remount,bind,ro ${q(NEW_ROOT)}`);

try {
  execFileSync("/bin/sh", ["-c", sh.join("\n")], { stdio: ["ignore", "ignore", "pipe"] });
} catch (error) {
  report({ setupError: String(/** @type {any} */ (error).stderr ?? error).slice(0, 2000) });
  process.exit(70);
}

const identity =
  config.mode === "root"
    ? [`--reuid=${config.uid}`, `--regid=${config.uid}`, "--clear-groups"]
    : ["--securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked"];
const args = [
  NEW_ROOT,
  "/usr/bin/setpriv",
  ...identity,
  "--no-new-privs",
  "--bounding-set=-all",
  "--inh-caps=-all",
  "--",
  "/usr/bin/prlimit",
  `--cpu=${config.limits.cpuSeconds}`,
  `--data=${config.limits.dataBytes}`,
  `--nproc=${config.limits.processes}`,
  "--core=0",
  `--fsize=${config.limits.fileBytes}`,
  "--",
  "/usr/bin/env",
  "-C",
  config.cwd,
  ...config.command,
];
const chroot = existsSync("/usr/sbin/chroot") ? "/usr/sbin/chroot" : "/usr/bin/chroot";
// stdin: the payload's input; 1, 2: shared output; 3: the result channel; 4: /dev/null (not our report).
const child = spawn(chroot, args, { env: config.env, stdio: ["pipe", "inherit", "inherit", 3, "ignore"] });
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
// vitest's workers: the payload's direct children (a submission's process never is one).
const workers = new Set();
const watch = () => {
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
  const live = () => processes().filter((p) => p.state !== "Z" && p.state !== "X");
  // Give the workers a moment to finish exiting; anything else is reported at once.
  const alive = live().filter((p) => !workers.has(p.pid)).map((p) => ({ pid: p.pid, command: commandOf(p.pid) }));
  for (let i = 0; i < 50 && live().some((p) => workers.has(p.pid)); i += 1) await new Promise((r) => setTimeout(r, 10));
  report({ exit: { code, signal }, alive, records: scratchRecords() });
  process.exit(0);
});
