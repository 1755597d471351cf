// Setup file of the package's suite: after each test file, the default server folder that file's
// managers made (src/defaults.ts) is removed if empty, since a test worker that vitest ends
// never gets the "exit" event that would remove it.
import { afterAll } from "vitest";
import { releaseDefaultCwd } from "../src/defaults.ts";

afterAll(() => releaseDefaultCwd());
