// A vitest reporter (it runs in vitest's main process, not in the workers that load the
// submission) that appends one JSON line per test start and end to $LAB_PROGRESS_FILE.
// When the grader has to kill a run at its deadline, these lines say which tests had
// finished and which one was still running. After the run it also appends the errors that
// escaped as unhandled (event "unhandled").

import { appendFileSync } from "node:fs";
import type { Reporter, SerializedError, TestCase, TestModule } from "vitest/node";

const file = process.env.LAB_PROGRESS_FILE;

function write(record: Record<string, unknown>): void {
  if (file) appendFileSync(file, `${JSON.stringify(record)}\n`);
}

function describeName(test: TestCase): string[] {
  const names: string[] = [];
  let parent = test.parent;
  while (parent.type === "suite") {
    names.unshift(parent.name);
    parent = parent.parent;
  }
  return names;
}

export default class ProgressReporter implements Reporter {
  onTestCaseReady(test: TestCase): void {
    write({ event: "start", file: test.module.moduleId, ancestors: describeName(test), title: test.name });
  }

  onTestCaseResult(test: TestCase): void {
    const result = test.result();
    write({
      event: "end",
      file: test.module.moduleId,
      ancestors: describeName(test),
      title: test.name,
      state: result.state,
      errors: (result.errors ?? []).map((e) => String(e.message ?? "")).slice(0, 3),
    });
  }

  // Errors that escaped as uncaught exceptions or unhandled rejections. Vitest leaves the
  // tests they happened in marked as passed (and its JSON results omit them), so they are
  // recorded here with the file and test vitest tagged them with, for the grader to fail.
  onTestRunEnd(_modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<SerializedError>): void {
    for (const e of errors.slice(0, 20)) {
      const tagged = e as SerializedError & { VITEST_TEST_PATH?: string; VITEST_TEST_NAME?: string };
      write({ event: "unhandled", file: tagged.VITEST_TEST_PATH ?? "", ancestors: [], title: tagged.VITEST_TEST_NAME ?? "", errors: [String(e.message ?? e.name ?? e)] });
    }
  }
}
