// The execute-only Node that vitest's processes run from in a grade (grader/run-vitest.ts): a
// copy kept once per Node binary in a folder only the grader's user can change, linked into
// each grade's folder; a kept copy not as it was made is made again, and a folder that is not
// the grader's own is never used (each grade then gets a copy of its own).

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { executeOnlyNode } from "../../grader/run-vitest.ts";

const work = mkdtempSync(join(tmpdir(), "lab-exec-node-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const grade = (name: string) => {
  const dir = join(work, name);
  mkdirSync(dir);
  return dir;
};

describe("the execute-only Node of a grade", () => {
  it("is one kept copy, mode 0111, linked into every grade's folder", () => {
    const cache = join(work, "cache");
    const first = statSync(executeOnlyNode(grade("a"), cache));
    const second = statSync(executeOnlyNode(grade("b"), cache));
    expect(first.mode & 0o7777).toBe(0o111);
    expect(second.ino).toBe(first.ino);
    expect(second.nlink).toBeGreaterThanOrEqual(3);
    expect(first.size).toBe(statSync(process.execPath).size);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    expect(readdirSync(cache)).toHaveLength(1);
  });

  it("makes the kept copy again when it is not as it was made", () => {
    const cache = join(work, "cache-changed");
    const first = executeOnlyNode(grade("c"), cache);
    const kept = join(cache, readdirSync(cache)[0]!);
    chmodSync(kept, 0o755);
    const again = statSync(executeOnlyNode(grade("d"), cache));
    expect(again.mode & 0o7777).toBe(0o111);
    expect(again.ino).not.toBe(statSync(first).ino);
  });

  it("copies for the grade alone where the folder is open to others", () => {
    const cache = join(work, "cache-open");
    mkdirSync(cache, { mode: 0o755 });
    chmodSync(cache, 0o755);
    const node = statSync(executeOnlyNode(grade("e"), cache));
    expect(node.mode & 0o7777).toBe(0o111);
    expect(node.nlink).toBe(1);
    expect(readdirSync(cache)).toHaveLength(0);
  });
});
