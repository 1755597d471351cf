// A vitest reporter (it runs in vitest's main process, not in the workers that load the
// submission): the only way results leave a grading run. It reads the channel key from
// stdin once, then writes signed records to fd 3 (grader/sandbox/channel.ts): test start
// and end (so a run killed at its deadline still says what had finished and what was
// running), the import-confinement violations the grade config's plugin recorded, the
// errors that escaped as unhandled, and at the end every test file with its tests, which is
// what the grader builds the checks from. No results file is written anywhere.

import { createHmac } from "node:crypto";
import { readSync, writeSync } from "node:fs";
import type { Reporter, SerializedError, TestCase, TestModule } from "vitest/node";
import { takeViolations } from "../sandbox/confine.ts";
import { suiteNames } from "./suite-names.ts";

const CHANNEL_FD = 3;
const enabled = process.env.LAB_CHANNEL === "1";
const key = enabled ? readKey() : "";

// The key is the first line of stdin (64 hex digits); what follows is for the gate (gate.ts).
function readKey(): string {
  const buffer = Buffer.alloc(65);
  let got = 0;
  while (got < buffer.length) {
    try {
      const n = readSync(0, buffer, got, buffer.length - got, null);
      if (n === 0) break;
      got += n;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
    }
  }
  return buffer.subarray(0, got).toString("utf8").trim();
}
let seq = 0;

function send(record: Record<string, unknown>): void {
  if (!enabled) return;
  const json = JSON.stringify({ seq: seq++, ...record });
  const line = `${createHmac("sha256", key).update(json).digest("hex")} ${json}\n`;
  const bytes = Buffer.from(line);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(CHANNEL_FD, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
    }
  }
}

const errorText = (e: { message?: string; stack?: string; name?: string }) => String(e.stack || e.message || e.name || e);

function flushViolations(): void {
  for (const v of takeViolations()) send({ event: "violation", ...v });
}

export default class ProgressReporter implements Reporter {
  onTestCaseReady(test: TestCase): void {
    flushViolations();
    send({ event: "start", file: test.module.moduleId, ancestors: suiteNames(test), title: test.name });
  }

  onTestCaseResult(test: TestCase): void {
    const result = test.result();
    send({
      event: "end",
      file: test.module.moduleId,
      ancestors: suiteNames(test),
      title: test.name,
      state: result.state,
      errors: (result.errors ?? []).map((e) => String(e.message ?? "")).slice(0, 3),
      // What the test left behind, as the worker's setup file recorded it (child/setup.ts).
      leftovers: ((test.meta() as { labRecords?: unknown[] }).labRecords ?? []).slice(0, 50),
    });
  }

  // Errors that escaped as uncaught exceptions or unhandled rejections. Vitest leaves the
  // tests they happened in marked as passed, so they are sent with the file and test vitest
  // tagged them with, for the grader to fail. Then every file and its tests, and "done".
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<SerializedError>): void {
    flushViolations();
    for (const e of errors.slice(0, 20)) {
      const tagged = e as SerializedError & { VITEST_TEST_PATH?: string; VITEST_TEST_NAME?: string };
      send({ event: "unhandled", file: tagged.VITEST_TEST_PATH ?? "", ancestors: [], title: tagged.VITEST_TEST_NAME ?? "", errors: [String(e.message ?? e.name ?? e)] });
    }
    let total = 0;
    for (const module of modules) {
      const tests = [...module.children.allTests()].map((test) => {
        const result = test.result();
        const diagnostic = test.diagnostic();
        return {
          ancestors: suiteNames(test),
          title: test.name,
          state: result.state,
          duration: diagnostic?.duration ?? null,
          errors: (result.errors ?? []).map(errorText).slice(0, 3),
        };
      });
      total += tests.length;
      send({ event: "file", file: module.moduleId, state: module.state(), errors: module.errors().map(errorText).slice(0, 3), tests });
    }
    send({ event: "done", total });
  }
}
