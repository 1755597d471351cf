// The journal that lets `npm run corpus:stress` go on where a stopped run ended
// (scripts/stress-journal.ts): what it keeps, what it drops, what it refuses.

import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gradedFiles, openJournal, type JournalIdentity } from "../../scripts/stress-journal.ts";

type V = { status: string; score: number };
const identity: JournalIdentity = { tree: { files: "0123456789abcdef", node: "v22.0.0" }, flags: { workers: 2, burners: 2, pin: true, only: [] } };
const names = ["solution", "kill-lie", "syntax-error"];

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "stress-journal-"));
  file = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("openJournal", () => {
  it("starts a journal with a header naming the files, Node and flags, and appends one line per verdict", () => {
    const journal = openJournal<V>(file, identity, 5, names, "abc123");
    expect(journal.resumed).toBe(0);
    expect(journal.rounds.size).toBe(0);
    journal.record(1, "solution", { status: "pass", score: 100 });
    const lines = readFileSync(file, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ journal: "corpus:stress", ...identity, head: "abc123" });
    expect(lines[1]).toEqual({ round: 1, name: "solution", verdict: { status: "pass", score: 100 } });
  });

  it("keeps the verdicts of an earlier run by round and submission, and only those of this run's rounds and submissions", () => {
    const first = openJournal<V>(file, identity, 5, names);
    first.record(1, "solution", { status: "pass", score: 100 });
    first.record(1, "kill-lie", { status: "fail", score: 84 });
    first.record(1, "kill-lie", { status: "fail", score: 92 }); // the same grade again: the last one counts, once
    first.record(2, "solution", { status: "pass", score: 100 });
    first.record(6, "solution", { status: "pass", score: 100 }); // beyond --rounds 5
    first.record(2, "gone-entry", { status: "pass", score: 100 }); // no longer in the corpus
    appendFileSync(file, "not json\n");
    const again = openJournal<V>(file, identity, 5, names);
    expect(again.resumed).toBe(3);
    expect([...again.rounds.keys()].sort()).toEqual([1, 2]);
    expect(again.rounds.get(1)?.get("kill-lie")).toEqual({ status: "fail", score: 92 });
    expect([...again.rounds.get(2)!.keys()]).toEqual(["solution"]);
  });

  it("drops a last line cut short by a stop, and the next verdict starts a line of its own", () => {
    openJournal<V>(file, identity, 5, names).record(1, "solution", { status: "pass", score: 100 });
    appendFileSync(file, '{"round":1,"name":"kill-lie","verdict":{"sta');
    const again = openJournal<V>(file, identity, 5, names);
    expect(again.resumed).toBe(1);
    again.record(1, "kill-lie", { status: "fail", score: 92 });
    const third = openJournal<V>(file, identity, 5, names);
    expect(third.resumed).toBe(2);
    expect(third.rounds.get(1)?.get("kill-lie")).toEqual({ status: "fail", score: 92 });
  });

  it("refuses a journal kept for other graded files, another Node or other flags, saying which", () => {
    openJournal<V>(file, identity, 5, names);
    expect(() => openJournal<V>(file, { ...identity, tree: { ...identity.tree, files: "fedcba9876543210" } }, 5, names)).toThrow(/other graded files or another Node.*fedcba9876543210/);
    expect(() => openJournal<V>(file, { ...identity, tree: { ...identity.tree, node: "v24.1.0" } }, 5, names)).toThrow(/another Node.*v24\.1\.0/);
    expect(() => openJournal<V>(file, { ...identity, flags: { ...identity.flags, burners: 1 } }, 5, names)).toThrow(/other flags.*"burners":1/);
    // (a refused journal is left as it was)
    expect(readFileSync(file, "utf8").trimEnd().split("\n")).toHaveLength(1);
  });

  it("refuses a file that is not a journal", () => {
    writeFileSync(file, "round,name\n");
    expect(() => openJournal<V>(file, identity, 5, names)).toThrow(/not a corpus:stress journal \(its first line is not JSON\)/);
    writeFileSync(file, '{"journal":"something else"}\n');
    expect(() => openJournal<V>(file, identity, 5, names)).toThrow(/not a corpus:stress journal$/);
  });
});

describe("gradedFiles", () => {
  const git = (cwd: string, ...args: string[]) => {
    const run = spawnSync("git", ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c", "commit.gpgsign=false", ...args], { cwd, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  };

  it("hashes the graded files at HEAD, leaves documentation out, and says when a graded file has uncommitted changes", () => {
    const repo = join(dir, "repo");
    mkdirSync(join(repo, "grader"), { recursive: true });
    mkdirSync(join(repo, "docs"), { recursive: true });
    writeFileSync(join(repo, "grader", "grade.ts"), "export const a = 1;\n");
    writeFileSync(join(repo, "grader", "README.md"), "# grader\n");
    writeFileSync(join(repo, "docs", "notes.ts"), "// not graded\n");
    git(repo, "init", "-q");
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "one");
    const first = gradedFiles(repo);
    expect(first).toMatchObject({ dirty: false, files: expect.stringMatching(/^[0-9a-f]{16}$/) });

    // Documentation and files outside the graded paths: neither dirty nor another hash.
    writeFileSync(join(repo, "grader", "README.md"), "# grader, with a note\n");
    writeFileSync(join(repo, "docs", "notes.ts"), "// still not graded\n");
    expect(gradedFiles(repo)).toMatchObject({ dirty: false, files: first.files });
    git(repo, "commit", "-qam", "notes");
    expect(gradedFiles(repo)).toMatchObject({ dirty: false, files: first.files });

    // A graded file: dirty until committed, then another hash.
    writeFileSync(join(repo, "grader", "grade.ts"), "export const a = 2;\n");
    expect(gradedFiles(repo)).toMatchObject({ dirty: true, files: first.files });
    git(repo, "commit", "-qam", "code");
    const after = gradedFiles(repo);
    expect(after.dirty).toBe(false);
    expect(after.files).not.toBe(first.files);
  });

  it("says plainly when the folder is not a git checkout", () => {
    expect(() => gradedFiles(dir)).toThrow(/is not a git checkout/);
  });
});
