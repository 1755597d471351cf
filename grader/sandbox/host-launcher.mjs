// @ts-check
// The client host launcher: part of ns-init (pid 1 of the sandbox, privileged there), serving
// the test workers on a unix socket in the payload's root (ns-root.mjs LAUNCHER_DIR), which
// the client host's root does not have. A worker's bridge (labs/<lab>/host/bridge.mjs) opens
// four connections for one host, each starting with one JSON line { token, id, role }: the
// per-grade token (in the payload's environment, never in the host's), an id of the bridge's
// choosing, and a role. "control" also carries the command, environment and folder; "fd3",
// "stdout" and "stderr" become those descriptors of the host itself, so the protocol and the
// output pass straight between host and worker, never through this process. The host runs
// in a PID, mount, IPC and UTS namespace of its own (`unshare --pid --fork --kill-child
// --mount-proc`), chrooted into the host's root, confined like the payload (ns-root.mjs
// confinedArgs). On the control connection the launcher answers
// { t: "started", pid, nsPid, init } (the host as the workers' namespace sees it, as its own
// does: 2, after the namespace's init, INIT below, and that init's pid)
// and { t: "exit", code, signal }; a "kill" line, or the control connection closing (the
// worker ended), kills the host's namespace, everything the submission started with it; a
// "signal" line signals one process of it for the worker (serveControl).
import { spawn } from "node:child_process";
import { timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { createServer } from "node:net";
import { CHROOT, confinedArgs, HOST_ROOT } from "./ns-root.mjs";

/** Env names the workers find the launcher by (channel.ts keeps them from the host's env). */
export const LAUNCHER_ENV = "LAB_HOST_LAUNCHER";
export const LAUNCHER_TOKEN_ENV = "LAB_HOST_LAUNCHER_TOKEN";
const ROLES = ["control", "fd3", "stdout", "stderr"];
/** Largest first line of a connection, in bytes (the control line carries the host's env). */
const MAX_HEADER_BYTES = 256 * 1024;
/** Hosts at once: a worker has one; more is a worker gone wrong. */
const MAX_HOSTS = 64;
const FLAGS = ["--pid", "--fork", "--kill-child", "--mount", "--ipc", "--uts", `--mount-proc=${HOST_ROOT}/proc`];
// The namespace's first process: a shell that starts the host (pid 2 there), lets go of the
// host's descriptors and exits with the host's status (128 + n for signal n). The host itself
// is not the namespace's init, which the kernel shields from most signals (an abort, a
// SIGTERM to itself would do nothing), and its status reaches unshare, which exits with it
// (unshare cannot pass on a SIGKILL: it exits 1 then; see exitOf).
// The host's stderr comes as fd 4 (fd 2 of unshare and the tools before the init is ns-init's:
// their own complaints, such as unshare's about a SIGKILL, stay out of the test output).
const INIT = ['"$@" 2>&4 4>&- &', "exec 3>&- 4>&- >/dev/null 2>&1", "wait $!"].join("\n");
// (The first name of each number: SIGABRT, not its alias SIGIOT.)
const NAME_OF = new Map(Object.entries(constants.signals).reverse().map(([name, n]) => [n, name]));

/**
 * @typedef {{ sockets: Map<string, import("node:net").Socket>, request?: any,
 *   child?: import("node:child_process").ChildProcess, init?: number, killed?: boolean, done?: boolean }} Pending
 */

// Starts the launcher on `socketPath` (ns-init's view); resolves once it listens.
export function startLauncher(/** @type {import("./ns-root.mjs").Config} */ config, /** @type {string} */ socketPath, /** @type {string} */ token) {
  /** @type {Map<string, Pending>} */
  const hosts = new Map();
  const expected = Buffer.from(token);
  const server = createServer((socket) => {
    socket.on("error", () => {});
    firstLine(socket, (line, rest) => {
      let header;
      try {
        header = JSON.parse(line);
      } catch {
        return void socket.destroy();
      }
      const given = Buffer.from(String(header?.token ?? ""));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return void socket.destroy();
      if (!ROLES.includes(header.role) || typeof header.id !== "string" || header.id.length > 64) return void socket.destroy();
      // Nothing may follow the first line of a protocol or output connection before the host runs.
      if (rest !== "" && header.role !== "control") return void socket.destroy();
      let host = hosts.get(header.id);
      if (!host) {
        if (hosts.size >= MAX_HOSTS) return void socket.destroy();
        hosts.set(header.id, (host = { sockets: new Map() }));
      }
      if (host.sockets.has(header.role) || host.done) return void socket.destroy();
      host.sockets.set(header.role, socket);
      if (header.role === "control") host.request = { ...header, early: rest };
      if (host.sockets.size === ROLES.length) launch(config, host, () => hosts.delete(header.id));
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve({ server, hosts, killAll: () => killAll(hosts) }));
  });
}

// Reads a connection's first line, then stops reading it (what follows is the host's).
function firstLine(/** @type {import("node:net").Socket} */ socket, /** @type {(line: string, rest: string) => void} */ then) {
  let text = "";
  const onData = (/** @type {Buffer} */ chunk) => {
    text += chunk.toString("utf8");
    const newline = text.indexOf("\n");
    if (newline === -1 && text.length <= MAX_HEADER_BYTES) return;
    socket.off("data", onData);
    socket.pause();
    if (newline === -1) return void socket.destroy();
    then(text.slice(0, newline), text.slice(newline + 1));
  };
  socket.on("data", onData);
}

// Starts one host with the three connections as its fds 3, 1 and 2, and serves its control.
function launch(/** @type {import("./ns-root.mjs").Config} */ config, /** @type {Pending} */ host, /** @type {() => void} */ forget) {
  const control = /** @type {import("node:net").Socket} */ (host.sockets.get("control"));
  const { command, env, cwd } = host.request ?? {};
  const ok = Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === "string") && typeof cwd === "string" && env && typeof env === "object";
  // (A worker that went before its host could start gets none.)
  if (!ok || control.destroyed) return void destroyAll(host, forget);
  /** @type {Record<string, string>} */
  const hostEnv = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === "string" && !key.startsWith(LAUNCHER_ENV)) hostEnv[key] = value;
  const s = (/** @type {string} */ role) => /** @type {import("node:net").Socket} */ (host.sockets.get(role));
  const init = ["/bin/sh", "-c", INIT, "lab-host-init", ...command];
  const child = spawn("/usr/bin/unshare", [...FLAGS, CHROOT, HOST_ROOT, ...confinedArgs(config, init, cwd, config.hostUid)], {
    env: hostEnv,
    stdio: ["ignore", s("stdout"), "inherit", s("fd3"), s("stderr")],
  });
  host.child = child;
  // The host holds its own copies now: this process lets go of its ends.
  for (const role of ["fd3", "stdout", "stderr"]) s(role).destroy();
  const say = (/** @type {object} */ message) => {
    if (!control.destroyed) control.write(`${JSON.stringify(message)}\n`);
  };
  child.on("error", () => {});
  child.on("exit", (code, signal) => {
    host.done = true;
    say({ t: "exit", ...exitOf(host, code, signal) });
    control.end();
    forget();
  });
  serveControl(host, control, say);
  // The init's pid (to kill the namespace by), then the host's (what the worker is told).
  if (child.pid !== undefined) whenForked(child.pid, (init) => ((host.init = init), whenForked(init, (pid) => say({ t: "started", pid, nsPid: nsPidOf(pid), init }))));
}

// The worker's lines on the control connection: "kill" (the host's namespace), or a signal
// for one process of the host's namespace ({ t: "signal", seq, pid, signal }: the workers
// cannot signal the host's user themselves), answered { t: "signalled", seq, error? }.
function serveControl(/** @type {Pending} */ host, /** @type {import("node:net").Socket} */ control, /** @type {(m: object) => void} */ say) {
  let text = String(host.request?.early ?? "");
  const lines = () => {
    let newline;
    while ((newline = text.indexOf("\n")) !== -1) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (line === "kill") killHost(host);
      else {
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message?.t === "signal") say({ t: "signalled", seq: message.seq, error: signalInside(host, message.pid, message.signal) });
      }
    }
  };
  control.on("data", (chunk) => {
    text += chunk.toString("utf8");
    if (text.length > MAX_HEADER_BYTES) text = "";
    lines();
  });
  control.on("close", () => killHost(host));
  control.resume();
  lines();
}

// Sends `signal` to `pid` if it is a process of this host's namespace (its init or one of
// the init's descendants, found by parent pids); returns the error code, if any.
function signalInside(/** @type {Pending} */ host, /** @type {unknown} */ pid, /** @type {unknown} */ signal) {
  if (!Number.isInteger(pid) || /** @type {number} */ (pid) <= 0 || host.init === undefined || host.done) return "ESRCH";
  if (!(typeof signal === "number" || (typeof signal === "string" && signal in constants.signals))) return "EINVAL";
  let at = /** @type {number} */ (pid);
  for (let hop = 0; hop < 64 && at !== host.init; hop += 1) {
    try {
      at = Number(/^PPid:\s*(\d+)/m.exec(readFileSync(`/proc/${at}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      return "ESRCH";
    }
    if (at <= 1) return "ESRCH";
  }
  if (at !== host.init) return "ESRCH";
  try {
    process.kill(/** @type {number} */ (pid), /** @type {string | number} */ (signal));
    return undefined;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code ?? "EPERM";
  }
}

// The host's status from unshare's: a kill of ours is SIGKILL (unshare then exits 1), 128 + n
// from the init is signal n, anything else the host's exit code.
function exitOf(/** @type {Pending} */ host, /** @type {number | null} */ code, /** @type {string | null} */ signal) {
  if (host.killed || signal) return { code: null, signal: signal && !host.killed ? signal : "SIGKILL" };
  const name = code !== null && code > 128 ? NAME_OF.get(code - 128) : undefined;
  return name ? { code: null, signal: name } : { code, signal: null };
}

// A process's pid in the namespace one level down (its NSpid), 0 when it is gone.
function nsPidOf(/** @type {number} */ pid) {
  try {
    return Number(/^NSpid:\s*\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

// The first child of `parent` (unshare's: the namespace's init; the init's: the host), polled for.
function whenForked(/** @type {number} */ parent, /** @type {(pid: number) => void} */ then, tries = 0) {
  let child = 0;
  try {
    child = Number(readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8").trim().split(/\s+/)[0] || 0);
  } catch {
    return; // gone: unshare's exit says the rest
  }
  if (child > 0) return then(child);
  if (tries < 2000) setTimeout(() => whenForked(parent, then, tries + 1), tries < 20 ? 0 : 5);
}

// SIGKILLs the namespace's first process: the kernel then kills every other process of the
// namespace, the host included, and the init is gone only when they all are, so unshare,
// which waits for it, exits after the last of them. (Before the init's pid is known: unshare,
// whose --kill-child takes the init with it.)
function killHost(/** @type {Pending} */ host) {
  const pid = host.init ?? host.child?.pid;
  if (pid === undefined || host.done) return;
  host.killed = true;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

function destroyAll(/** @type {Pending} */ host, /** @type {() => void} */ forget) {
  for (const socket of host.sockets.values()) socket.destroy();
  forget();
}

// Every host still running, killed; resolves when their unshare processes have exited.
function killAll(/** @type {Map<string, Pending>} */ hosts) {
  const waits = [];
  for (const host of hosts.values()) {
    if (host.child && !host.done) waits.push(new Promise((resolve) => host.child?.once("exit", resolve)));
    killHost(host);
    if (!host.child) for (const socket of host.sockets.values()) socket.destroy();
  }
  return Promise.all(waits);
}
