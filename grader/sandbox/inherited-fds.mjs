// @ts-check
// Descriptors a process holds without having asked for them. Node and libuv open every
// descriptor of their own close-on-exec, but one the process inherited open across exec (its
// caller's `77>>file 78<secret`, a pipe of the tool that started npm) passes on to every child
// it spawns, and theirs, through any number of execs and user changes: a submission's process
// would hold it, the sandbox's too, and write or read it as the grader's caller. (Node marks
// the lowest few close-on-exec when it starts, up to the first gap in their numbers; higher
// ones keep their flag.) What the grader passes on purpose, it names in spawn()'s stdio.
// Linux only (/proc/self/fdinfo); elsewhere there is nothing to read, and nothing is done.
import { closeSync, readdirSync, readFileSync } from "node:fs";

/** O_CLOEXEC in /proc/self/fdinfo's octal "flags:". */
const O_CLOEXEC = 0o2000000;

// This process's descriptors from 3 up that a child it spawns would inherit (open, not
// close-on-exec), except `keep` and the IPC channel of a process started by fork() (its
// parent's, which the process itself needs).
export function inheritableFds(/** @type {number[]} */ keep = []) {
  if (process.platform !== "linux") return [];
  const channel = /** @type {{ fd?: number } | undefined} */ (process.channel)?.fd;
  /** @type {number[]} */
  const out = [];
  let names;
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return out;
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3 || keep.includes(fd) || fd === channel) continue;
    let flags;
    try {
      flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
    } catch {
      continue; // closed since (the listing's own descriptor)
    }
    if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) out.push(fd);
  }
  return out.sort((a, b) => a - b);
}

// Closes them: for a process the grader owns (its CLI, ns-init), before it starts anything.
// Returns the descriptors closed.
export function closeInheritedFds(/** @type {number[]} */ keep = []) {
  const fds = inheritableFds(keep);
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
  }
  return fds;
}
