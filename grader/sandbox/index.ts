// The operating-system sandbox around every process that loads a submission (the import check
// and the test run). On Linux it is util-linux `unshare`: new PID, mount and network namespaces
// (plus a user namespace when the grader is not root, with its subordinate ids mapped where it
// has them, so the payload and the client hosts get users of their own as under root), a
// private root built by `ns-init.mjs`, an unprivileged identity and resource limits (for the
// grade as a whole too, where it has a control group: cgroup.ts). The writable scratch is a
// size-capped tmpfs inside (gone with it): the records the outer grader needs come back in
// ns-init's report, read without trusting them (../safe-fs.mjs). Elsewhere, or where the kernel
// refuses namespaces, `--sandbox auto` says so once and runs the payload as a plain child in its
// own process group (`off`); `--sandbox required` refuses to grade.
//
// Both ways the payload gets the same file descriptors: 0 its input (the result channel's
// key), 1 and 2 output (diagnostics only), 3 the result channel (see channel.ts), and none
// the grader's own process inherited from its caller (spawnClean below).

import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { closeSync, existsSync, openSync, realpathSync } from "node:fs";
import { inheritableFds } from "./inherited-fds.mjs";
import { pickPayloadUsers, reachableByOthers, SANDBOX_UID, subordinateIds, type IdBlock, type PayloadUsers } from "./ids.ts";
import { joinedCommand, type GradeGroup } from "./cgroup.ts";
export { idBlockStart, MAPPED_ID_MIN, mappedRanges, pickPayloadUsers, reachableByOthers, realUidsInUse, ROOT_ID_BASE, ROOT_ID_PAIRS, SANDBOX_UID, subordinateIds, type IdBlock, type PayloadUsers } from "./ids.ts";
import type { RecordRead } from "../safe-fs.mjs";
import { dirname, isAbsolute, join, relative } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { NOKEYS_BINARY as NOKEYS } from "../cli-bundle.mjs";

export type SandboxMode = "required" | "auto" | "off";
export const SANDBOX_MODES: readonly SandboxMode[] = ["required", "auto", "off"];
/** How the sandbox is entered on this machine: as real root, through a user namespace, or not at all. */
export type SandboxKind = "root" | "user" | "none";

const PRLIMIT = "/usr/bin/prlimit";
const NS_INIT = join(dirname(fileURLToPath(import.meta.url)), "ns-init.mjs");
export { NOKEYS };

/** Size of the sandbox's private /tmp, in bytes. */
export const SANDBOX_TMP_BYTES = 64 * 1024 * 1024;
/** Size of the sandbox's writable scratch folder (a tmpfs), in bytes. */
export const SANDBOX_SCRATCH_BYTES = 64 * 1024 * 1024;
/** Files and folders the scratch tmpfs (and the private /tmp) may hold. */
export const SANDBOX_INODES = 16_384;
/** Largest file a payload's process may write (RLIMIT_FSIZE; also without the sandbox, where prlimit exists), in bytes. */
export const PAYLOAD_FILE_BYTES = 64 * 1024 * 1024;
/** Per-process limit on writable private memory (RLIMIT_DATA; an address-space limit would break WebAssembly, which reserves 10 GiB per instance). */
export const SANDBOX_DATA_BYTES = 4 * 1024 ** 3;
/** Processes each of a payload's users may have (RLIMIT_NPROC; the kernel counts per user, and each payload has users of its own: ids.ts). */
export const SANDBOX_PROCESSES = 2048;

// New PID (own /proc), network, mount, System V IPC (its objects die with it) and UTS namespaces.
const BASE_FLAGS = ["--pid", "--fork", "--mount-proc", "--net", "--mount", "--ipc", "--uts", "--kill-child"];
let probed: { kind: SandboxKind; why: string; ids?: IdBlock } | undefined;

// The flags of a user-namespace sandbox: the grader's user is uid 0 there; with a block of
// subordinate ids, ids 1 to count are that block (newuidmap writes the map).
function userFlags(ids?: IdBlock): string[] {
  const block = ids ? [`--map-users=${ids.uid},1,${ids.count}`, `--map-groups=${ids.gid},1,${ids.count}`] : [];
  return ["--user", "--map-root-user", ...block, ...BASE_FLAGS];
}

// Which kind of sandbox this machine allows (probed once per process, about 10 ms), and for a
// user namespace the subordinate ids it maps, where the grader's user has a block that holds
// the payload's and the hosts' users and newuidmap/newgidmap (shadow's uidmap) are installed.
export function sandboxSupport(): { kind: SandboxKind; why: string; ids?: IdBlock } {
  if (probed) return probed;
  if (process.platform !== "linux") return (probed = { kind: "none", why: `namespaces need Linux (this is ${process.platform})` });
  for (const tool of ["/usr/bin/unshare", "/usr/bin/setpriv", "/usr/bin/prlimit", "/usr/bin/env"]) {
    if (!existsSync(tool)) return (probed = { kind: "none", why: `${tool} is missing (util-linux)` });
  }
  if (!existsSync("/usr/sbin/chroot") && !existsSync("/usr/bin/chroot")) return (probed = { kind: "none", why: "chroot is missing (coreutils)" });
  const isRoot = process.getuid?.() === 0;
  const ids = subordinateIds();
  const tries: Array<[SandboxKind, string[], IdBlock?]> = [...(isRoot ? [["root", BASE_FLAGS] as [SandboxKind, string[]]] : []), ...(ids ? [["user", userFlags(ids), ids] as [SandboxKind, string[], IdBlock]] : []), ["user", userFlags()]];
  let why = "";
  for (const [kind, flags, mapped] of tries) {
    const out = spawnSync("/usr/bin/unshare", [...flags, "/bin/sh", "-c", "mount -t tmpfs none /tmp"], { encoding: "utf8", timeout: 5_000 });
    if (out.status === 0) return (probed = { kind, why: "", ...(mapped ? { ids: mapped } : {}) });
    why = (out.stderr || out.error?.message || `exit ${out.status}`).trim().split("\n")[0]!;
  }
  return (probed = { kind: "none", why: `the kernel refused namespaces: ${why}` });
}

export interface PayloadOptions {
  /** Program and arguments (absolute paths). */
  command: string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to the payload's stdin at once; the stream stays open for more (Payload.stdin). */
  input: string;
  sandbox: SandboxKind;
  /** The project tree (read-only inside), its hidden paths, the grade folder (read-only) and its writable scratch. */
  root: string;
  hide: string[];
  gradeDir: string;
  scratch: string;
  /** CPU seconds per process. */
  cpuSeconds: number;
  /** Folders made inside the scratch folder before the payload starts (relative). */
  scratchFolders?: string[];
  /** Files of the scratch folder to bring back (relative): in the sandbox, in ns-init's report. */
  records?: string[];
  /**
   * Whether the payload's direct children are its own workers (vitest's), left out of the
   * processes reported alive. Default true; false where the payload loads submission code
   * itself (the import check), so whatever it starts is reported.
   */
  childWorkers?: boolean;
  /**
   * In a user namespace: the subordinate ids to map (null: none). Default: the block
   * sandboxSupport() found, where the project is reachable by others (the sandbox's users
   * read it as others, as under root); without one, the payload and the hosts are uid 0 of
   * the namespace, without capabilities.
   */
  ids?: IdBlock | null;
  /** RLIMIT_NPROC of the payload's users (default SANDBOX_PROCESSES). */
  processes?: number;
  /** The kernel's key system calls: refused where lab-nokeys is built (the default), or "allowed" (the tests show what refusing them stops). */
  keys?: "refused" | "allowed";
  /** The grade's control group (cgroup.ts), which the payload joins before it starts: memory and processes bounded for the grade as a whole. */
  group?: GradeGroup;
}

export interface NsReport {
  setupError?: string;
  exit?: { code: number | null; signal: string | null };
  /** Processes alive in the namespace when the payload exited (vitest's workers excepted). */
  alive?: Array<{ pid: number; command: string }>;
  /** The scratch folder's records (PayloadOptions.records), read by ns-init once the payload exited. */
  records?: Record<string, RecordRead>;
}

export interface Payload {
  child: ChildProcess;
  /** The payload's stdin (after `input`); end it when there is nothing more to say. */
  stdin: Writable;
  /** Fd 3 of the payload: the result channel. */
  channel: Readable;
  /** ns-init's report, once the sandbox is gone (undefined without a sandbox). */
  report: Promise<NsReport | undefined>;
  /** The users the payload and its client hosts run as, where it has users of its own (real root, or mapped subordinate ids). */
  users?: PayloadUsers;
}

// Starts the payload, sandboxed or not, in a process group of its own.
export function startPayload(options: PayloadOptions): Payload {
  if (options.sandbox === "none") return startUnsandboxed(options);
  const ids = mappedIds(options);
  const flags = options.sandbox === "user" ? userFlags(ids) : BASE_FLAGS;
  const command = ["/usr/bin/unshare", ...flags, ...(options.keys === "allowed" || !existsSync(NOKEYS) ? [] : [NOKEYS]), process.execPath, NS_INIT];
  const child = spawnClean(...joinedCommand(options.group, dieWithGrader(command)), { cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"], detached: true, shell: false });
  const users = options.sandbox === "root" || ids !== undefined ? reserveUsers(child, ids) : undefined;
  child.stdin!.on("error", () => {});
  child.stdin!.write(`${JSON.stringify({ config: nsInitConfig(options, users) })}\n${options.input}`);
  return { child, stdin: child.stdin!, channel: child.stdio[3] as Readable, report: readReport(child.stdio[4] as Readable), ...(users ? { users } : {}) };
}

// Users of its own for a payload (ids.ts, pickPayloadUsers): a pair no running process holds
// and no other payload of this process is using (counted: a last draw, or nobody's pair, may
// be shared). Released when `unshare` exits or fails to start: once it has exited the
// kernel has killed every process in its PID namespace; a SIGKILL of `unshare` itself (the
// deadline) may release the pair while they are still dying, when they can fork no more and
// a new pick still sees them in /proc.
const reserved = new Map<number, number>();
function reserveUsers(child: ChildProcess, ids: IdBlock | undefined): PayloadUsers {
  const users = pickPayloadUsers(ids, { taken: new Set(reserved.keys()) });
  const pair = [users.uid, users.hostUid];
  for (const id of pair) reserved.set(id, (reserved.get(id) ?? 0) + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    for (const id of pair) {
      const left = (reserved.get(id) ?? 1) - 1;
      if (left > 0) reserved.set(id, left);
      else reserved.delete(id);
    }
  };
  child.once("exit", release);
  child.once("error", release);
  return users;
}

// Without a sandbox: the command itself (under RLIMIT_FSIZE where prlimit exists), its fd 3
// the channel; there is no report.
function startUnsandboxed(options: PayloadOptions): Payload {
  const command = existsSync(PRLIMIT) ? [PRLIMIT, `--fsize=${PAYLOAD_FILE_BYTES}`, "--", ...options.command] : options.command;
  const child = spawnClean(...joinedCommand(options.group, dieWithGrader(command)), { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe", "pipe"], detached: true, shell: false });
  child.stdin!.on("error", () => {});
  child.stdin!.write(options.input);
  return { child, stdin: child.stdin!, channel: child.stdio[3] as Readable, report: Promise.resolve(undefined) };
}

// spawn(), with /dev/null in the child for each descriptor of this process it would inherit
// unasked (open across exec: inherited-fds.mjs). The grade command closes those as it starts
// (grader/cli.mjs), but grade() may run in a process the grader does not own (the project's
// tests, its scripts), whose descriptors it must leave open; without a sandbox nothing else
// stands between them and the submission (in one, ns-init closes them again).
function spawnClean(command: string, args: string[], options: SpawnOptions & { stdio: "pipe"[] }): ChildProcess {
  const strays = inheritableFds().filter((fd) => fd >= options.stdio.length);
  if (strays.length === 0) return spawn(command, args, options);
  const devNull = openSync("/dev/null", "r");
  try {
    const stdio: Array<"pipe" | "ignore" | number> = [...options.stdio];
    for (const fd of strays) {
      while (stdio.length < fd) stdio.push("ignore"); // (left as it is: closed at exec, or not open)
      stdio[fd] = devNull;
    }
    return spawn(command, args, { ...options, stdio });
  } finally {
    closeSync(devNull);
  }
}

// The payload is SIGKILLed when the grader dies, however it dies (a platform's hard stop
// kills the grader's process group, and the payload has a group of its own): PR_SET_PDEATHSIG
// through setpriv, where util-linux has it. In the sandbox that takes the whole namespace.
function dieWithGrader(command: string[]): [string, string[]] {
  const all = existsSync(SETPRIV) ? [SETPRIV, "--pdeathsig", "KILL", "--", ...command] : command;
  return [all[0]!, all.slice(1)];
}
const SETPRIV = "/usr/bin/setpriv";

// The subordinate ids a user-namespace payload maps (see PayloadOptions.ids).
function mappedIds(options: PayloadOptions): IdBlock | undefined {
  if (options.sandbox !== "user") return undefined;
  if (options.ids !== undefined) return options.ids ?? undefined;
  const found = sandboxSupport().ids;
  return found && reachableByOthers(options.root) ? found : undefined;
}

// What ns-init needs to build the sandbox and start the payload in it. Its "root" mode is
// for a namespace where the payload's and the hosts' users exist (real root, or a user
// namespace with subordinate ids mapped): inside, both build the same sandbox. Without
// users, everything runs as uid 0 of a user namespace, without capabilities.
function nsInitConfig(options: PayloadOptions, users: PayloadUsers | undefined) {
  return {
    root: options.root,
    also: outsideDependencies(options.root),
    gradeDir: options.gradeDir,
    scratch: options.scratch,
    hide: options.hide,
    mode: users ? "root" : "user",
    uid: users?.uid ?? SANDBOX_UID,
    hostUid: users?.hostUid ?? SANDBOX_UID,
    command: options.command,
    cwd: options.cwd,
    env: options.env,
    tmpBytes: SANDBOX_TMP_BYTES,
    scratchBytes: SANDBOX_SCRATCH_BYTES,
    inodes: SANDBOX_INODES,
    scratchFolders: options.scratchFolders ?? [],
    records: options.records ?? [],
    childWorkers: options.childWorkers ?? true,
    hostShared: hostShared(options),
    limits: { cpuSeconds: options.cpuSeconds, dataBytes: SANDBOX_DATA_BYTES, processes: options.processes ?? SANDBOX_PROCESSES, fileBytes: PAYLOAD_FILE_BYTES },
  };
}

// The scratch folders a run that hosts its client (LAB_CLIENT_HOST) shares with the client
// hosts (host-launcher.mjs): the fixture workspaces' root, where the servers the client
// starts write their logs and pid files. Nothing else of the scratch is in a host's root.
function hostShared(options: PayloadOptions): string[] {
  if (options.env.LAB_CLIENT_HOST !== "1") return [];
  const shared = options.env.LAB_FIXTURE_ROOT ?? "";
  const rel = relative(options.scratch, shared);
  return shared && rel && !rel.startsWith("..") && !isAbsolute(rel) ? [rel] : [];
}

/** Largest report ns-init may send, in characters (the records it carries are capped each). */
const MAX_REPORT_CHARS = 64 * 1024 * 1024;

// ns-init's report on its fd 4: JSON lines merged into one object, once the stream closed
// (undefined when it wrote nothing).
function readReport(stream: Readable): Promise<NsReport | undefined> {
  return new Promise((resolve) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      if (text.length < MAX_REPORT_CHARS) text += chunk;
    });
    const done = () => {
      const merged: NsReport = {};
      for (const line of text.split("\n")) {
        try {
          if (line.trim()) Object.assign(merged, JSON.parse(line));
        } catch {
          // torn line
        }
      }
      resolve(text ? merged : undefined);
    };
    stream.on("close", done);
    stream.on("error", done);
  });
}

// Folders the project's packages live in when they are outside the project (a node_modules
// that is a symlink, as in a copied workbook that shares its dependencies): mounted
// read-only at their real paths too, or nothing would load inside the sandbox.
export function outsideDependencies(root: string): string[] {
  const link = join(root, "node_modules");
  if (!existsSync(link)) return [];
  const real = realpathSync(link);
  return real === link || real.startsWith(`${realpathSync(root)}/`) ? [] : [real];
}
