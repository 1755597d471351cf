// @ts-check
// How a bridge (bridge.mjs) starts its client host. In a sandboxed grade the sandbox offers a
// launcher (grader/sandbox/host-launcher.mjs: its socket and token in LAB_HOST_LAUNCHER and
// LAB_HOST_LAUNCHER_TOKEN): the host then runs in PID and mount namespaces of its own, where
// it cannot see, signal or trace this worker or anything else of the run. Four connections
// to the launcher make one host: control (the request, then "started" and "exit"), and the
// host's fd 3, stdout and stderr, which the launcher hands to the host as they are, so the
// protocol passes straight between the host and this thread. Without a launcher (`--sandbox
// off`, not Linux, the project's own suite) the host is a plain child, as before. Either way
// the bridge gets the same shape: the protocol socket, stderr, write, kill, the exit, and the
// host's pid as this worker sees it and as the host's own namespace sees it.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect } from "node:net";

/**
 * @typedef {{ socket: import("node:net").Socket, stderr: import("node:stream").Readable,
 *   write(line: string): void, kill(): void,
 *   signal(pid: number, signal: string | number, done: (error?: string) => void): void,
 *   onExit(listener: (code: number | null, signal: string | null) => void): void }} Host
 * @typedef {{ command: string[], env: Record<string, string>, cwd: string }} HostRequest
 */

// Starts the host; `onPid(pid, nsPid, init)` once its pid is known (init: the first process
// of the host's namespace, where it has one of its own).
export function startHost(/** @type {HostRequest} */ request, /** @type {(pid: number, nsPid: number, init?: number) => void} */ onPid) {
  const path = process.env.LAB_HOST_LAUNCHER;
  const token = process.env.LAB_HOST_LAUNCHER_TOKEN;
  return path && token ? launched(path, token, request, onPid) : plain(request, onPid);
}

/** @returns {Host} */
function plain(/** @type {HostRequest} */ { command, env, cwd }, /** @type {(pid: number, nsPid: number, init?: number) => void} */ onPid) {
  const child = spawn(String(command[0]), command.slice(1), { cwd, env, stdio: ["ignore", "inherit", "pipe", "pipe"], shell: false });
  const socket = /** @type {import("node:net").Socket} */ (child.stdio[3]);
  if (child.pid !== undefined) onPid(child.pid, child.pid);
  return {
    socket,
    stderr: /** @type {import("node:stream").Readable} */ (child.stderr),
    write: (line) => void socket.write(line),
    kill: () => void child.kill("SIGKILL"),
    signal: (pid, signal, done) => done(attempt(() => process.kill(pid, signal))),
    onExit: (listener) => void child.on("exit", (code, signal) => listener(code, signal)),
  };
}

/** @returns {Host} */
function launched(/** @type {string} */ path, /** @type {string} */ token, /** @type {HostRequest} */ request, /** @type {(pid: number, nsPid: number, init?: number) => void} */ onPid) {
  const id = randomUUID();
  const open = (/** @type {string} */ role, /** @type {object} */ extra = {}) => {
    const socket = connect(path);
    socket.on("error", () => {});
    socket.write(`${JSON.stringify({ token, id, role, ...extra })}\n`);
    return socket;
  };
  const control = open("control", request);
  const socket = open("fd3");
  const stdout = open("stdout");
  const stderr = open("stderr");
  stdout.pipe(process.stdout, { end: false });
  /** @type {string[] | undefined} held until the host runs (what comes before is the launcher's to read) */
  let queued = [];
  /** @type {Array<(code: number | null, signal: string | null) => void>} */
  const exits = [];
  let exited = false;
  const exit = (/** @type {number | null} */ code, /** @type {string | null} */ signal) => {
    if (exited) return;
    exited = true;
    for (const listener of exits) listener(code, signal);
  };
  /** @type {Map<number, (error?: string) => void>} */
  const signalled = new Map();
  let nextSignal = 0;
  let text = "";
  control.setEncoding("utf8");
  control.on("data", (chunk) => {
    text += chunk;
    let newline;
    while ((newline = text.indexOf("\n")) !== -1) {
      const message = JSON.parse(text.slice(0, newline));
      text = text.slice(newline + 1);
      if (message.t === "started") {
        onPid(message.pid, message.nsPid, message.init);
        for (const line of queued ?? []) socket.write(line);
        queued = undefined;
      } else if (message.t === "signalled") {
        signalled.get(message.seq)?.(message.error ?? undefined);
        signalled.delete(message.seq);
      } else if (message.t === "exit") exit(message.code ?? null, message.signal ?? null);
    }
  });
  // The launcher gone (or refusing) without an exit: the host is gone too.
  control.on("close", () => {
    if (!exited) process.stderr.write("the client host launcher closed the connection\n");
    exit(null, null);
    for (const done of signalled.values()) done("ESRCH");
    signalled.clear();
  });
  return {
    socket,
    stderr,
    write: (line) => void (queued ? queued.push(line) : socket.write(line)),
    kill: () => void (control.destroyed || control.write("kill\n")),
    // (The launcher signals the host's processes for this worker, which cannot where the
    // host has a user of its own.)
    signal: (pid, signal, done) => {
      if (control.destroyed) return done("ESRCH");
      const seq = ++nextSignal;
      signalled.set(seq, done);
      control.write(`${JSON.stringify({ t: "signal", seq, pid, signal })}\n`);
    },
    onExit: (listener) => void exits.push(listener),
  };
}

// The error code of a call that may throw, or undefined.
function attempt(/** @type {() => unknown} */ fn) {
  try {
    fn();
    return undefined;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code ?? "EPERM";
  }
}
