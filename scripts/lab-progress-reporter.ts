// A vitest reporter for `npm run lab:starter` (it runs in vitest's main process): one JSON
// line per test file queued and finished and per test started and finished, appended to
// $LAB_PROGRESS_FILE. When the run is stopped at its wall-clock limit these lines say which
// files and tests never finished. File events are decided in this process, so they are
// there even when a worker is stuck in a synchronous loop before it could report its test.

import { appendFileSync } from "node:fs";
import type { Reporter, TestCase, TestModule } from "vitest/node";
import { suiteNames } from "../grader/child/suite-names.ts";

const file = process.env.LAB_PROGRESS_FILE;

function write(record: Record<string, unknown>): void {
  if (file) appendFileSync(file, `${JSON.stringify(record)}\n`);
}

export default class LabProgressReporter implements Reporter {
  onTestModuleQueued(module: TestModule): void {
    write({ event: "file-start", file: module.moduleId });
  }

  onTestModuleEnd(module: TestModule): void {
    write({ event: "file-end", file: module.moduleId });
  }

  onTestCaseReady(test: TestCase): void {
    write({ event: "start", file: test.module.moduleId, ancestors: suiteNames(test), title: test.name });
  }

  onTestCaseResult(test: TestCase): void {
    write({ event: "end", file: test.module.moduleId, ancestors: suiteNames(test), title: test.name });
  }
}
