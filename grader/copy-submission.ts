// The submission's private copy: regular files and folders only, found with lstat (never
// through a link); a symbolic link, FIFO, socket or device anywhere in it refuses the copy
// and names it, and so does a file with another name elsewhere (a hard link). Every file is
// read through a handle that does not follow links or block (a file swapped for a FIFO or a
// link after the lstat is refused too), written new into the
// copy and given its mode through its own handle: nothing outside the copy is ever changed.
// `copyRefusal` says why a copy was refused, in the learner's language.

import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, writeSync } from "node:fs";
import { join, relative } from "node:path";
import { t } from "./i18n.ts";
import type { Lang } from "./manifest.ts";
import { refusalOf, type Refusal } from "./safe-fs.mjs";

/** Largest submission copied, in bytes; anything bigger is refused. */
export const MAX_SUBMISSION_BYTES = 20 * 1024 * 1024;
/** Most files and folders copied; more is refused. */
export const MAX_SUBMISSION_ENTRIES = 5_000;
/** Deepest folder nesting copied. */
export const MAX_SUBMISSION_DEPTH = 32;
/** Folders never copied (dependencies, version control, build output). */
export const SKIPPED_FOLDERS = new Set(["node_modules", ".git", "coverage", "dist"]);

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

export type CopyOutcome =
  | { ok: true; bytes: number; entries: number }
  | { ok: false; why: "refused"; refused: Array<{ path: string; kind: Refusal }> }
  | { ok: false; why: "too-big" | "too-many" | "too-deep" };

// Copies `source` (a folder; the path itself may be a link, nothing inside it may) to `dest`,
// which must not exist.
export function copySubmission(source: string, dest: string): CopyOutcome {
  const refused: Array<{ path: string; kind: Refusal }> = [];
  const budget = { bytes: 0, entries: 0, over: undefined as undefined | "too-big" | "too-many" | "too-deep" };
  makeFolder(dest);
  const walk = (from: string, to: string, depth: number): void => {
    if (depth > MAX_SUBMISSION_DEPTH) budget.over ??= "too-deep";
    for (const name of readdirSync(from).sort()) {
      if (budget.over || SKIPPED_FOLDERS.has(name)) continue;
      const src = join(from, name);
      const st = lstatSync(src, { throwIfNoEntry: false });
      if (!st) continue;
      if (++budget.entries > MAX_SUBMISSION_ENTRIES) budget.over = "too-many";
      else if (st.isDirectory()) {
        makeFolder(join(to, name));
        walk(src, join(to, name), depth + 1);
      } else if (!st.isFile()) refused.push({ path: relative(source, src), kind: refusalOf(st) });
      else {
        const copied = copyFile(src, join(to, name), MAX_SUBMISSION_BYTES - budget.bytes);
        if (typeof copied === "number") budget.bytes += copied;
        else if (copied === "too-big") budget.over = "too-big";
        else refused.push({ path: relative(source, src), kind: copied });
      }
    }
  };
  walk(source, dest, 0);
  if (budget.over) return { ok: false, why: budget.over };
  if (refused.length > 0) return { ok: false, why: "refused", refused };
  return { ok: true, bytes: budget.bytes, entries: budget.entries };
}

// A new folder with mode 0755, set through its own handle (whatever the umask).
export function makeFolder(path: string): void {
  mkdirSync(path, { mode: 0o755 });
  const fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    fchmodSync(fd, 0o755);
  } finally {
    closeSync(fd);
  }
}

// Copies one regular file (at most `room` bytes) into a new file: 0644, or 0755 when any
// execute bit was set. Returns its size, or why it was not copied.
function copyFile(src: string, dest: string, room: number): number | Refusal {
  let input: number;
  try {
    input = openSync(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ELOOP" || code === "EMLINK" ? "symlink" : code === "ENXIO" ? "socket" : "unreadable";
  }
  try {
    const st = fstatSync(input);
    if (!st.isFile()) return refusalOf(st);
    // A file with another name elsewhere may be one its submitter could not read (a hard link
    // made where the kernel does not protect links): the grader reads as its own user, so it
    // copies only files that are nothing but themselves.
    if (st.nlink > 1) return "hardlink";
    if (st.size > room) return "too-big";
    const output = openSync(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      const buffer = Buffer.alloc(64 * 1024);
      let total = 0;
      for (let n = readSync(input, buffer); n > 0; n = readSync(input, buffer)) {
        total += n;
        if (total > room) return "too-big";
        writeSync(output, buffer, 0, n);
      }
      fchmodSync(output, st.mode & 0o111 ? 0o755 : 0o644);
      return total;
    } finally {
      closeSync(output);
    }
  } finally {
    closeSync(input);
  }
}

// Why a copy was refused, in the learner's language.
export function copyRefusal(copied: Exclude<CopyOutcome, { ok: true }>, lang: Lang): string {
  if (copied.why !== "refused") {
    if (copied.why === "too-big") return t("submissionTooBig", lang, { max: MAX_SUBMISSION_BYTES });
    return copied.why === "too-many" ? t("submissionTooMany", lang, { max: MAX_SUBMISSION_ENTRIES }) : t("submissionTooDeep", lang, { max: MAX_SUBMISSION_DEPTH });
  }
  const shown = copied.refused.slice(0, 5).map((r) => `${r.path} (${t(KIND_WORD[r.kind], lang)})`);
  const more = copied.refused.length > 5 ? ` … +${copied.refused.length - 5}` : "";
  return t("copyRefused", lang, { where: shown.join(", ") + more });
}

/** The message word for each kind of non-regular file. */
export const KIND_WORD = {
  symlink: "kindSymlink",
  fifo: "kindFifo",
  folder: "kindFolder",
  socket: "kindSocket",
  device: "kindDevice",
  hardlink: "kindHardlink",
  "too-big": "kindUnreadable",
  unreadable: "kindUnreadable",
} as const;
