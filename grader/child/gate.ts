// vitest globalSetup of every grading run (it runs in vitest's main process before any test
// file is loaded): holds the tests until the grader writes "go" on stdin, which it does once
// the import check has passed. Vitest starts up (config, Vite server) while the import check
// runs, but no process loads the submission until the check has shown that loading it
// finishes; a submission whose import spins never has a dozen workers spinning too.
//
// Where the lab hosts its client (LAB_CLIENT_HOST, grader/hosted-run.ts) the test workers
// never load the submission: only its hosts do. There the workers start and load their test
// files at once, alongside the import check, and the gate holds the hosts instead: this
// process writes the verdict ("go" or "stop") to LAB_GATE_FILE, a file of its own scratch
// folder that no host can reach, and a worker starts its first host only once it reads "go"
// (labs/<lab>/host/channel.ts, `waitForGate`). The grader's go says whether the hosts' bundles
// were built ("go") or could not be ("go unbundled": the hosts load the submission through
// tsx), and the file says the same.

import { renameSync, writeFileSync } from "node:fs";
import { hostedRun } from "../hosted-run.ts";

const STOPPED = "the grader stopped the run before it began (the import check failed)";

export default async function gate(): Promise<void> {
  if (process.env.LAB_CHANNEL !== "1") return;
  const file = process.env.LAB_GATE_FILE;
  if (file && hostedRun()) {
    void readGo().then((go) => {
      writeFileSync(`${file}.new`, go || "stop");
      renameSync(`${file}.new`, file);
    });
    return;
  }
  if (!(await readGo())) throw new Error(STOPPED);
}

// The go ("go" or "go unbundled") once it arrives on stdin; undefined when stdin ends (or
// fails) without it.
async function readGo(): Promise<string | undefined> {
  let text = "";
  try {
    for await (const chunk of process.stdin) {
      text += String(chunk);
      const go = /(?:^|\n)(go(?: unbundled)?)\n/.exec(text)?.[1];
      if (go) {
        process.stdin.pause();
        process.stdin.unref?.();
        return go;
      }
    }
  } catch {
    // a stdin that fails is a run that never got its go
  }
  return undefined;
}
