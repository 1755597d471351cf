// @ts-check
// Files the submission could have touched, handled without trusting them: a record read back
// from a writable folder (never through a link, never blocking on a FIFO, a regular file of
// bounded size or a named refusal), and a folder removed even when the submission locked it
// (folders made writable again walking with lstat, never through a link). Plain JavaScript:
// ns-init.mjs reads the sandbox's records with it, the outer grader the unsandboxed ones, and
// the fixtures may append their records with it.
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readdirSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Largest record file read back, in bytes (a solution's grade writes about 0.4 MiB). */
export const RECORD_MAX_BYTES = 16 * 1024 * 1024;

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
/** Linux's O_PATH (not in Node's constants): a handle on a folder we may not read. */
const O_PATH = 0o10000000;

/** What was found where a regular file was expected. @typedef {"symlink" | "fifo" | "folder" | "socket" | "device" | "hardlink" | "too-big" | "unreadable"} Refusal */
/** @typedef {{ ok: true, text: string, missing?: true } | { ok: false, refusal: Refusal, detail?: string }} RecordRead */

/** The kind of a non-regular file, from its stat. @param {import("node:fs").Stats} st @returns {Refusal} */
export function refusalOf(st) {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "fifo";
  if (st.isDirectory()) return "folder";
  if (st.isSocket()) return "socket";
  return "device";
}

// Reads a record file: never through a link (O_NOFOLLOW), never blocking (O_NONBLOCK: a FIFO
// opens at once and is then refused), only a regular file (fstat of what was opened), at most
// maxBytes. A missing file reads as empty.
/** @param {string} path @param {number} [maxBytes] @returns {RecordRead} */
export function readRecordFile(path, maxBytes = RECORD_MAX_BYTES) {
  const read = readRegularFile(path, maxBytes);
  return read.ok ? { ok: true, text: read.bytes.toString("utf8"), ...(read.missing ? { missing: read.missing } : {}) } : read;
}

// readRecordFile's bytes, undecoded (the host bundle's modules: `with { type: "bytes" }`).
/** @param {string} path @param {number} maxBytes @returns {{ ok: true, bytes: Buffer, missing?: true } | { ok: false, refusal: Refusal, detail?: string }} */
export function readRegularFile(path, maxBytes) {
  let fd;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } catch (error) {
    const code = /** @type {NodeJS.ErrnoException} */ (error).code;
    if (code === "ENOENT") return { ok: true, bytes: Buffer.alloc(0), missing: true };
    // ELOOP (EMLINK on some BSDs): the last component is a link. ENXIO: a socket.
    if (code === "ELOOP" || code === "EMLINK") return { ok: false, refusal: "symlink" };
    if (code === "ENXIO") return { ok: false, refusal: "socket" };
    return { ok: false, refusal: "unreadable", detail: code ?? String(error) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, refusal: refusalOf(st) };
    if (st.size > maxBytes) return { ok: false, refusal: "too-big", detail: String(maxBytes) };
    const chunks = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(1024 * 1024, maxBytes + 1 - total) || 1);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      chunks.push(chunk.subarray(0, n));
      // Grew while being read (something still writing): refused, never read without end.
      if (total > maxBytes) return { ok: false, refusal: "too-big", detail: String(maxBytes) };
    }
    return { ok: true, bytes: Buffer.concat(chunks) };
  } catch (error) {
    return { ok: false, refusal: "unreadable", detail: /** @type {NodeJS.ErrnoException} */ (error).code ?? String(error) };
  } finally {
    closeSync(fd);
  }
}

// Appends one line to a record file the same way: created if missing, never through a link,
// never blocking on a FIFO, only to a regular file. False when the file is not one.
/** @param {string} path @param {string} line */
export function appendRecordLine(path, line) {
  let fd;
  try {
    fd = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o644);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFile()) return false;
    writeSync(fd, line.endsWith("\n") ? line : `${line}\n`);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

// The folders in a folder, never through a link (for walking what a submission could write).
/** @param {string} dir @returns {string[]} */
export function subfolders(dir) {
  /** @type {string[]} */
  const out = [];
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      if (lstatSync(join(dir, name)).isDirectory()) out.push(join(dir, name));
    } catch {
      // gone
    }
  }
  return out;
}

// Gives the owner rwx on `dir` (a folder, never a link): through a handle that does not
// follow links (O_PATH on Linux, else an O_NOFOLLOW read handle), so a folder swapped for a
// link in between is never changed through it.
/** @param {string} dir */
function unlockFolder(dir) {
  if (process.platform === "linux") {
    let fd;
    try {
      fd = openSync(dir, O_PATH | O_NOFOLLOW | O_DIRECTORY);
    } catch {
      return;
    }
    try {
      const st = fstatSync(fd);
      const uid = process.getuid?.();
      if (st.isDirectory() && (uid === undefined || uid === 0 || st.uid === uid) && (st.mode & 0o700) !== 0o700) {
        // chmod through /proc/self/fd/N changes the very folder the handle holds.
        fchmodPath(`/proc/self/fd/${fd}`, (st.mode & 0o7777) | 0o700);
      }
    } finally {
      closeSync(fd);
    }
    return;
  }
  let fd;
  try {
    fd = openSync(dir, O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
  } catch {
    return;
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory() && (st.mode & 0o700) !== 0o700) fchmodSync(fd, (st.mode & 0o7777) | 0o700);
  } finally {
    closeSync(fd);
  }
}

/** @param {string} path @param {number} mode */
function fchmodPath(path, mode) {
  try {
    chmodSync(path, mode);
  } catch {
    // not ours to change: rm reports it
  }
}

// Removes `dir` whatever the submission left in it: every folder (found with lstat, never
// through a link) first made rwx for its owner, then removed (rm never follows links).
// Returns the error message when something could not be removed, never throws.
/** @param {string} dir @returns {string | undefined} */
export function removeTree(dir) {
  const unlockAll = () => {
    const stack = [dir];
    let visited = 0;
    while (stack.length > 0 && visited < 200_000) {
      const current = /** @type {string} */ (stack.pop());
      visited += 1;
      unlockFolder(current);
      stack.push(...subfolders(current));
    }
  };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      if (attempt > 0 || process.getuid?.() !== 0) unlockAll();
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
      return undefined;
    } catch (error) {
      if (attempt === 1) return String(/** @type {Error} */ (error).message ?? error);
    }
  }
  return undefined;
}
