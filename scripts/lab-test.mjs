// Runs the lab's six evidence tests against one folder: `node scripts/lab-test.mjs starter`,
// `... solution`, or `... path/to/submission`. Extra arguments go to vitest, so
// `npm run lab:starter -- timeout` runs only tests/evidence/timeout.test.ts.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const labDir = join(root, "labs", "33-mcp-lite");
const [target = "solution", ...rest] = process.argv.slice(2);
const dir = ["starter", "solution"].includes(target) ? join(labDir, target) : resolve(target);
if (!existsSync(join(dir, "src", "mcp-client.ts"))) {
  console.error(`no src/mcp-client.ts in ${dir}`);
  process.exit(2);
}
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const result = spawnSync(process.execPath, [vitest, "run", "--config", join(labDir, "vitest.config.ts"), ...rest], {
  stdio: "inherit",
  env: { LAB_TEST_FILES: "tests/evidence/*.test.ts", ...process.env, LAB_SUBMISSION: dir },
});
process.exit(result.status ?? 1);
