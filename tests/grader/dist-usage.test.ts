// `npm run dist` takes a kind and one output path: anything else is the usage (exit status 2),
// and nothing is written (a flag is never taken for a folder).

import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { main } from "../../scripts/dist.ts";

describe("npm run dist's arguments", () => {
  it.each([[["student", "--out", "x"]], [["student", "--out"]], [["student"]], [["zip", "x"]], [["gradescope", "a.zip", "b.zip"]]])("refuses %j with the usage and writes nothing", async (argv) => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    onTestFinished(() => write.mockRestore());
    expect(await main(argv)).toBe(2);
    expect(String(write.mock.calls[0]?.[0])).toMatch(/^usage: npm run dist/);
    expect(existsSync(join(process.cwd(), "--out"))).toBe(false);
  });
});
