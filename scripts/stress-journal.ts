// The journal of `npm run corpus:stress -- --journal FILE`: one line per grade as it ends, so
// a run of hours that is stopped goes on where it stopped. The first line says what the
// verdicts belong to (the graded files, Node, the flags); a journal is reopened only for the
// same. Every later line is one grade: `{ round, name, verdict }`.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";

/** What a grade runs: the paths whose files a journal's verdicts belong to. */
export const GRADED_PATHS = ["grader", "labs", "fixtures", "package-lock.json"];

export interface GradedFiles {
  head: string;
  /** One hash of every graded file at HEAD (path and blob), documentation (*.md) left out. */
  files: string;
  /** True when a graded file has uncommitted changes. */
  dirty: boolean;
}

/** The graded files of the repository at `root`, as git sees them. */
export function gradedFiles(root: string): GradedFiles {
  const git = (...args: string[]) => spawnSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const head = git("rev-parse", "HEAD");
  if (head.status !== 0) throw new Error(`--journal: ${root} is not a git checkout (${head.stderr.trim() || head.error?.message})`);
  // A note written while the run goes on changes no verdict: documentation does not count.
  const graded = (path: string) => !path.endsWith(".md");
  // (git's listing ends with a newline, which the hash keeps: journals already kept depend on it)
  const listing = git("ls-tree", "-r", "HEAD", "--", ...GRADED_PATHS).stdout.split("\n").filter((line) => graded(line.split("\t")[1] ?? ""));
  const status = git("status", "--porcelain", "--untracked-files=no", "--", ...GRADED_PATHS);
  const changed = status.stdout.split("\n").filter((line) => line.trim() !== "" && graded(line.slice(3).trim()));
  return {
    head: head.stdout.trim(),
    files: createHash("sha256").update(listing.join("\n")).digest("hex").slice(0, 16),
    dirty: status.status !== 0 || changed.length > 0,
  };
}

/** What a journal's verdicts belong to; two runs may share a journal only when these are equal. */
export interface JournalIdentity {
  tree: { files: string; node: string };
  flags: { workers: number; burners: number; pin: boolean; only: string[] };
}

export interface Journal<V> {
  file: string;
  /** The verdicts kept from earlier runs, by round, then by submission. */
  rounds: Map<number, Map<string, V>>;
  /** How many verdicts were kept. */
  resumed: number;
  /** Appends one grade's verdict. */
  record(round: number, name: string, verdict: V): void;
}

/**
 * Opens the journal `file`, or starts it when it is missing or empty. Throws, with the
 * reason, for a file that is not a journal or belongs to another identity. Keeps the
 * verdicts of `names` in rounds 1 to `rounds`; a line cut short by a stop (the last) is
 * dropped, and that grade runs again.
 */
export function openJournal<V extends object>(file: string, identity: JournalIdentity, rounds: number, names: string[], head = ""): Journal<V> {
  const kept = new Map<number, Map<string, V>>();
  const journal = (resumed: number): Journal<V> => ({
    file,
    rounds: kept,
    resumed,
    record: (round, name, verdict) => appendFileSync(file, `${JSON.stringify({ round, name, verdict })}\n`),
  });
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (text.trim() === "") {
    writeFileSync(file, `${JSON.stringify({ journal: "corpus:stress", ...identity, head, started: new Date().toISOString() })}\n`);
    return journal(0);
  }
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  let first: { journal?: unknown; tree?: unknown; flags?: unknown };
  try {
    first = JSON.parse(lines[0]!);
  } catch {
    throw new Error(`--journal: ${file} is not a corpus:stress journal (its first line is not JSON)`);
  }
  if (first?.journal !== "corpus:stress") throw new Error(`--journal: ${file} is not a corpus:stress journal`);
  if (JSON.stringify(first.tree) !== JSON.stringify(identity.tree)) {
    throw new Error(`--journal: ${file} was kept for other graded files or another Node (${JSON.stringify(first.tree)}); these are ${JSON.stringify(identity.tree)}`);
  }
  if (JSON.stringify(first.flags) !== JSON.stringify(identity.flags)) {
    throw new Error(`--journal: ${file} was kept with other flags (${JSON.stringify(first.flags)}); these are ${JSON.stringify(identity.flags)}`);
  }
  // (a last line cut short is ended here, so the next verdict starts a line of its own)
  if (!text.endsWith("\n")) appendFileSync(file, "\n");
  const known = new Set(names);
  let resumed = 0;
  for (const line of lines.slice(1)) {
    let entry: { round?: unknown; name?: unknown; verdict?: unknown };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const { round, name, verdict } = entry ?? {};
    if (!Number.isInteger(round) || (round as number) < 1 || (round as number) > rounds) continue;
    if (typeof name !== "string" || !known.has(name) || verdict === null || typeof verdict !== "object") continue;
    const byName = kept.get(round as number) ?? new Map<string, V>();
    kept.set(round as number, byName);
    if (!byName.has(name)) resumed += 1;
    byName.set(name, verdict as V);
  }
  return journal(resumed);
}
