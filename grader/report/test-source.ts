// The source of the test code behind a check, for report formats that show it (Exercism's
// test_code): the describe("<check id>") blocks of the lab's test files, read from the lab
// folder at render time. A check with no describe of its own (probe/orphans) has none.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Folders of a lab that never hold the lab's own tests. */
const SKIP = new Set(["node_modules", "corpus", "solution", "starter"]);

// Every describe("<id>", …) block in the lab's *.test.ts files, with the file it came from.
export function describeSources(lab: string, id: string, root = ROOT): string[] {
  const labDir = join(root, "labs", lab);
  if (!existsSync(labDir)) return [];
  const out: string[] = [];
  for (const file of testFiles(labDir)) {
    const block = describeBlock(readFileSync(file, "utf8"), id);
    if (block) out.push(`// ${relative(root, file)}\n${block}`);
  }
  return out;
}

function testFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && !SKIP.has(entry.name)) files.push(...testFiles(join(dir, entry.name)));
    else if (entry.isFile() && entry.name.endsWith(".test.ts")) files.push(join(dir, entry.name));
  }
  return files;
}

// The lines from a top-level `describe("<id>"` to the first `});` at the start of a line after it.
export function describeBlock(source: string, id: string): string | undefined {
  const lines = source.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`describe(${JSON.stringify(id)}`) || line.startsWith(`describe('${id}'`));
  if (start < 0) return undefined;
  const end = lines.findIndex((line, i) => i > start && line.startsWith("});"));
  return lines.slice(start, end < 0 ? lines.length : end + 1).join("\n");
}
