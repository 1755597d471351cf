// The test set of `npm run mutation` (StrykerJS, stryker.config.mjs). MUTATION_TESTS=unit:
// tests/unit, for every module but mcp-client.ts. MUTATION_TESTS=client: tests/unit,
// tests/client and the hardening client guards, for mcp-client.ts, whose behaviour is only
// seen through a live server. MUTATION_TESTS=extensions: the package's unit tests of
// tool-adapter.ts, tool-schema.ts and server-manager.ts (server-manager-rules included). Never the lab evidence, grader or lesson tests (they grade
// whole submissions) nor the 50 MiB flood and memory tests: every mutant would cost minutes.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const sets: Record<string, string[]> = {
  unit: ["tests/unit/**/*.test.ts"],
  // The package modules that came from the reference solution, with their own unit tests.
  extensions: ["tool-adapter", "tool-schema", "server-manager", "server-manager-rules"].map((m) => `packages/extensions/test/${m}.test.ts`),
  client: [
    "tests/unit/**/*.test.ts", "tests/client/**/*.test.ts",
    ...["requests", "server-process", "notifications", "handshake", "client-metrics"].map((m) => `tests/hardening/${m}.test.ts`),
  ],
};

export default defineConfig({
  test: {
    include: sets[process.env.MUTATION_TESTS ?? "client"] ?? sets.client!,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { LAB_SUBMISSION_DIR: fileURLToPath(new URL("./labs/33-mcp-lite/solution", import.meta.url)) },
  },
});
