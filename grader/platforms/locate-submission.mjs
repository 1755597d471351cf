// Finds the learner's client in an upload, whatever shape the platform gave it, and copies
// it to a folder shaped like the starter (OUT/src/mcp-client.ts and its sibling files).
//   node grader/platforms/locate-submission.mjs UPLOAD_DIR OUT_DIR
// Accepted: src/ at the top (files at the root), one or more folders deep (a zipped folder,
// GitHub's repo-main/…, the whole learner repository with labs/33-mcp-lite/starter/src/),
// or the src/ files alone (a bare mcp-client.ts). The shallowest match wins, then the first
// by name. node_modules, .git, __MACOSX and symbolic links are never followed or copied.
// Nothing found: OUT stays empty and the grader reports the missing entry file. Exit 0 always
// (2 only for a usage error); what was chosen is printed on stderr for the platform's log.
// @ts-check
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

const ENTRY = "mcp-client.ts";
const SKIP = new Set(["node_modules", ".git", "__MACOSX"]);
/** Deepest folder searched below the upload. */
const MAX_DEPTH = 6;

const [uploadArg, outArg] = process.argv.slice(2);
if (!uploadArg || !outArg) {
  process.stderr.write("usage: node locate-submission.mjs UPLOAD_DIR OUT_DIR\n");
  process.exit(2);
}
const upload = uploadArg;
const out = outArg;

/** @returns {{ dir: string, kind: "src" | "bare" } | undefined} */
function find() {
  /** @type {Array<{ dir: string, kind: "src" | "bare" }>} */
  let level = [];
  /** @type {{ dir: string, kind: "src" | "bare" } | undefined} */
  let bare;
  let dirs = [upload];
  for (let depth = 0; depth <= MAX_DEPTH && dirs.length > 0; depth++) {
    level = [];
    /** @type {string[]} */
    const next = [];
    for (const dir of dirs.sort()) {
      const src = join(dir, "src", ENTRY);
      if (existsSync(src) && lstatSync(src).isFile() && !lstatSync(join(dir, "src")).isSymbolicLink()) level.push({ dir, kind: "src" });
      if (!bare && existsSync(join(dir, ENTRY)) && lstatSync(join(dir, ENTRY)).isFile()) bare = { dir, kind: "bare" };
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory() && !SKIP.has(entry.name)) next.push(join(dir, entry.name));
      }
    }
    if (level.length > 0) return level[0];
    dirs = next;
  }
  return bare;
}

const copyOptions = {
  recursive: true,
  /** @param {string} src */
  filter: (src) => !lstatSync(src).isSymbolicLink() && !src.split(/[\\/]/).some((part) => SKIP.has(part)),
};
mkdirSync(out, { recursive: true });
const found = existsSync(upload) ? find() : undefined;
if (!found) {
  process.stderr.write(`locate-submission: no ${ENTRY} under ${upload}\n`);
} else if (found.kind === "src") {
  cpSync(found.dir, out, copyOptions);
  process.stderr.write(`locate-submission: using ${relative(upload, found.dir) || "."}/src/${ENTRY}\n`);
} else {
  cpSync(found.dir, join(out, "src"), copyOptions);
  process.stderr.write(`locate-submission: using bare ${relative(upload, join(found.dir, ENTRY))} as src/\n`);
}
