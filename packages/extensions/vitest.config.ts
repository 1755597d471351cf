// The package's own suite: `npm test --workspace @coding-agent/extensions` runs it alone
// (pnpm: `pnpm --filter @coding-agent/extensions test`); the root vitest.config.ts lists it
// as a project so the root `npm test` runs it too, under coverage.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: dirname(fileURLToPath(import.meta.url)),
  test: {
    name: "extensions",
    include: ["test/**/*.test.ts"],
    // Each file's module graph makes its own default server folder; a worker that is ended
    // never fires "exit", so the setup file removes it after each file.
    setupFiles: ["./test/release-default-cwd.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    allowOnly: false,
  },
});
