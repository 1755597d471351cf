// vitest globalSetup of every grading run (it runs in vitest's main process before any test
// file is loaded): waits until the grader writes "go" on stdin, which it does once the import
// check has passed. Vitest starts up (config, Vite server) while the import check runs, but
// no worker loads the submission until the check has shown that loading it finishes; a
// submission whose import spins never has a dozen workers spinning too.

export default async function gate(): Promise<void> {
  if (process.env.LAB_CHANNEL !== "1") return;
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes("go\n")) {
      process.stdin.pause();
      process.stdin.unref?.();
      return;
    }
  }
  throw new Error("the grader stopped the run before it began (the import check failed)");
}
