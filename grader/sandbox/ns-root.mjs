// @ts-check
// The private roots ns-init builds, as one shell script of mounts: the payload's root (the
// test run) and, for a run that hosts the client (LAB_CLIENT_HOST), the client host's root.
// Both see the system folders, Node, the project (hidden folders covered) and the grade's
// folder read-only. The payload's root has its scratch tmpfs and the launcher's socket
// folder; the host's root has a scratch tmpfs of its own in which only the folders it
// shares with the workers (the fixture workspaces) are the payload's, bound through, a /tmp
// of its own and no socket folder. Its /proc is mounted per host, in the host's own PID
// namespace (host-launcher.mjs). Also the confined command both run: chroot, identity,
// capabilities dropped, resource limits.
import { existsSync, lstatSync, openSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { dirname } from "node:path";

/** What ns-init is told (sandbox/index.ts nsInitConfig). */
/** @typedef {{ root: string, also: string[], gradeDir: string, scratch: string, hide: string[], mode: "root" | "user",
 *  uid: number, hostUid: number, command: string[], cwd: string, env: Record<string,string>, tmpBytes: number,
 *  scratchBytes: number, inodes: number, scratchFolders: string[], records: string[], childWorkers?: boolean, hostShared: string[],
 *  limits: { cpuSeconds: number, dataBytes: number, processes: number, fileBytes: number } }} Config */
export const q = (/** @type {string} */ s) => `'${s.replaceAll("'", "'\\''")}'`;
/** The payload's root and the client host's root: tmpfs mount points on the staging /tmp. */
export const NEW_ROOT = "/tmp/.lab-root";
export const HOST_ROOT = "/tmp/.lab-host-root";
/** The launcher's folder inside the payload's root (absent from the host's). */
export const LAUNCHER_DIR = "/.lab-launcher";

/** Host folders reached through directory fds opened before the staging tmpfs hid them, and the identity files (identityFiles). */
export function openFolders(/** @type {Config} */ config) {
  const fdOf = (/** @type {string} */ dir) => `/proc/${process.pid}/fd/${openSync(dir, "r")}`;
  const nodePrefix = dirname(dirname(realpathSync(process.execPath)));
  // A prefix that would also show the grade's folders (node in /tmp/bin): just the binary.
  const nodeBind = nodePrefix === "/" || `${config.gradeDir}/`.startsWith(`${nodePrefix}/`) ? realpathSync(process.execPath) : nodePrefix;
  return { rootFd: fdOf(config.root), alsoFds: config.also.map((dir) => ({ dir, fd: fdOf(dir) })), gradeFd: fdOf(config.gradeDir), nodeFd: fdOf(nodeBind), nodeBind, nodePrefix, identity: identityFiles(config) };
}

/** Where ns-init writes the user and group files that name the payload's users: the staging tmpfs, in neither root. */
export const IDENTITY_DIR = "/tmp/.lab-identity";
/** Largest /etc/passwd plus /etc/group copied (the staging tmpfs holds 1 MiB). */
const IDENTITY_MAX_BYTES = 512 * 1024;

// In root mode the payload and the hosts run as ids picked per payload (sandbox/ids.ts), which
// the host's /etc/passwd does not name, so getpwuid() would find no one (Node's os.userInfo(),
// its os.homedir() without HOME, whoami), where it found `nobody` before. The roots get the
// two users (lab-payload, lab-host) and their group first, then the host's lines, less any
// that name the same ids (getpwuid() takes the first match): ns-init writes them, byte for
// byte, to the staging tmpfs, and each root binds them over /etc/passwd and /etc/group.
// Nothing where /etc or either file is not a plain folder or file (a link would be followed
// in ns-init's root, not the new one), or the files are too large.
/** @returns {{ passwd: Buffer, group: Buffer } | undefined} */
function identityFiles(/** @type {Config} */ config) {
  const { uid, hostUid } = config;
  if (config.mode !== "root" || !Number.isInteger(uid) || !Number.isInteger(hostUid)) return undefined;
  try {
    if (!lstatSync("/etc").isDirectory() || !lstatSync("/etc/passwd").isFile() || !lstatSync("/etc/group").isFile()) return undefined;
    const [passwd, group] = [readFileSync("/etc/passwd"), readFileSync("/etc/group")];
    if (passwd.length + group.length > IDENTITY_MAX_BYTES) return undefined;
    return identityLines(passwd, group, uid, hostUid);
  } catch {
    return undefined;
  }
}

/** The two files' new text: the lab's lines first, then the host's (bytes as they are) less those naming the same ids. */
export function identityLines(/** @type {Buffer} */ passwd, /** @type {Buffer} */ group, /** @type {number} */ uid, /** @type {number} */ hostUid) {
  const keep = (/** @type {Buffer} */ text, /** @type {number[]} */ ids) => {
    /** @type {Buffer[]} */
    const out = [];
    let at = 0;
    while (at < text.length) {
      const end = text.indexOf(10, at);
      const line = text.subarray(at, end === -1 ? text.length : end);
      at = end === -1 ? text.length : end + 1;
      const id = Number(line.toString("latin1").split(":")[2]);
      if (line.length > 0 && !ids.includes(id)) out.push(line, Buffer.from("\n"));
    }
    return out;
  };
  return {
    passwd: Buffer.concat([Buffer.from(`lab-payload:x:${uid}:${uid}:grading sandbox:/nonexistent:/usr/sbin/nologin\nlab-host:x:${hostUid}:${uid}:grading sandbox, client host:/nonexistent:/usr/sbin/nologin\n`), ...keep(passwd, [uid, hostUid])]),
    group: Buffer.concat([Buffer.from(`lab-payload:x:${uid}:\n`), ...keep(group, [uid])]),
  };
}

// The mounts of one root at `base`. `host`: the client host's root (see above).
export function rootScript(/** @type {string} */ base, /** @type {Config} */ config, /** @type {ReturnType<typeof openFolders>} */ fds, host = false) {
  const sh = [`mkdir ${q(base)}`, `mount -t tmpfs -o size=4m,mode=755 lab-root ${q(base)}`];
  const R = (/** @type {string} */ p) => q(`${base}${p}`);
  const bound = systemMounts(base, sh);
  if (fds.identity) sh.push(`mount --bind -o ro ${IDENTITY_DIR}/passwd ${R("/etc/passwd")}`, `mount --bind -o ro ${IDENTITY_DIR}/group ${R("/etc/group")}`);
  sh.push(`mkdir ${R("/dev")} ${R("/proc")} ${R("/tmp")}`);
  sh.push(`mount --rbind /dev ${R("/dev")}`);
  if (existsSync("/dev/shm")) sh.push(`mount -t tmpfs -o size=1m,mode=1777 lab-shm ${R("/dev/shm")}`);
  // The host's /proc comes with its PID namespace (unshare --mount-proc), one per host.
  if (!host) sh.push(`mount -t proc proc ${R("/proc")}`);
  sh.push(`mount -t tmpfs -o size=${config.tmpBytes},nr_inodes=${config.inodes},mode=1777,nosuid,nodev lab-tmp ${R("/tmp")}`);
  // Node's prefix where the system folders do not hold it, bound through its fd after the new
  // /tmp (a Node under /tmp is neither hidden by the staging tmpfs nor covered by the new /tmp).
  const { nodeBind, nodePrefix } = fds;
  if (!bound.some((b) => nodeBind === b || nodeBind.startsWith(`${b}/`))) {
    const file = nodeBind !== nodePrefix;
    sh.push(file ? `mkdir -p ${q(dirname(`${base}${nodeBind}`))} && touch ${R(nodeBind)}` : `mkdir -p ${R(nodeBind)}`);
    sh.push(`mount --bind -o ro ${fds.nodeFd} ${R(nodeBind)}`);
  }
  // The project, read-only, with the hidden folders (solutions, corpus, .git, ...) covered.
  sh.push(`mkdir -p ${R(config.root)}`, `mount --bind -o ro ${fds.rootFd} ${R(config.root)}`);
  for (const hidden of config.hide) {
    if (!existsSync(hidden)) continue;
    if (lstatSync(hidden).isDirectory()) sh.push(`mount -t tmpfs -o ro,size=4k,mode=755 lab-hidden ${R(hidden)}`);
    else sh.push(`mount --bind -o ro /dev/null ${R(hidden)}`);
  }
  // The project's dependencies, read-only, where they live outside it (a symlinked node_modules).
  for (const { dir, fd } of fds.alsoFds) sh.push(`mkdir -p ${R(dir)}`, `mount --bind -o ro ${fd} ${R(dir)}`);
  // The grade's folder read-only (the submission copy); its scratch folder a size-capped tmpfs
  // owned by the payload's user, with the folders the payload expects.
  sh.push(`mkdir -p ${R(config.gradeDir)}`, `mount --bind -o ro ${fds.gradeFd} ${R(config.gradeDir)}`);
  const uid = host ? config.hostUid : config.uid;
  const owner = config.mode === "root" ? `,uid=${uid},gid=${config.uid}` : "";
  sh.push(`mount -t tmpfs -o size=${config.scratchBytes},nr_inodes=${config.inodes},mode=755,nosuid,nodev${owner} lab-scratch ${R(config.scratch)}`);
  for (const folder of config.scratchFolders) {
    sh.push(`mkdir -p ${R(`${config.scratch}/${folder}`)}`);
    if (config.mode === "root") sh.push(`chown ${uid}:${config.uid} ${R(`${config.scratch}/${folder}`)}`);
  }
  // The folders the host shares with the workers: the payload's own, bound through.
  if (host) for (const folder of config.hostShared) sh.push(`mount --bind ${q(`${NEW_ROOT}${config.scratch}/${folder}`)} ${R(`${config.scratch}/${folder}`)}`);
  // The launcher's socket folder: root's, searchable; the socket itself is the payload's user's.
  if (!host) sh.push(`mkdir ${R(LAUNCHER_DIR)}`, `mount -t tmpfs -o size=64k,nr_inodes=16,mode=711 lab-launcher ${R(LAUNCHER_DIR)}`);
  sh.push(`mount -o remount,bind,ro ${q(base)}`);
  return sh;
}

// System folders, read-only; symlinks (merged /usr) recreated as symlinks. Returns the folders bound.
function systemMounts(/** @type {string} */ base, /** @type {string[]} */ sh) {
  /** @type {string[]} */
  const bound = [];
  for (const top of ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]) {
    if (!existsSync(top) || bound.some((b) => top === b || top.startsWith(`${b}/`))) continue;
    const st = lstatSync(top);
    if (st.isSymbolicLink()) sh.push(`mkdir -p ${q(dirname(`${base}${top}`))}`, `ln -s ${q(readlinkSync(top))} ${q(`${base}${top}`)}`);
    else if (st.isDirectory()) sh.push(`mkdir -p ${q(`${base}${top}`)}`, `mount --bind -o ro ${q(top)} ${q(`${base}${top}`)}`);
    bound.push(top);
  }
  return bound;
}

// The confined command, run as `chroot <root> ...`: the unprivileged identity (root mode:
// `uid` (config.uid, or config.hostUid for a client host) and config.uid's group; user mode: securebits that keep uid 0 of the namespace powerless), no new
// privileges, no capabilities, the resource limits, then the command in its folder.
export function confinedArgs(/** @type {Config} */ config, /** @type {string[]} */ command, /** @type {string} */ cwd, uid = config.uid) {
  // (A host's own user keeps the payload's group: the fixture workspaces are group-writable.)
  const identity =
    config.mode === "root"
      ? [`--reuid=${uid}`, `--regid=${config.uid}`, "--clear-groups"]
      : ["--securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked"];
  const { cpuSeconds, dataBytes, processes, fileBytes } = config.limits;
  return [
    "/usr/bin/setpriv", ...identity, "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--",
    "/usr/bin/prlimit", `--cpu=${cpuSeconds}`, `--data=${dataBytes}`, `--nproc=${processes}`, "--core=0", `--fsize=${fileBytes}`, "--",
    "/usr/bin/env", "-C", cwd, ...command,
  ];
}

export const CHROOT = existsSync("/usr/sbin/chroot") ? "/usr/sbin/chroot" : "/usr/bin/chroot";
