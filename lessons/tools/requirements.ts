// What every lesson must contain, and the check ids every grade must report (CONTRACT §2).

/** Anchors every lesson must have: one per required part of the course. */
export const REQUIRED_ANCHORS = [
  "deliverable", "on-the-job", "prerequisites", "principle", "lab", "failing", "key-points",
  "pending-record", "request-order", "id-matching", "settle", "timeout", "abort", "remote-error",
  "handshake", "process-exit", "close", "spawn", "framing", "stderr", "backpressure",
  "untrusted-metadata", "verify", "failure-cases", "case-1", "case-2", "case-3", "homework",
  "rubric", "trade-offs", "next",
] as const;

/** Check ids the contract requires of every grade. */
export const REQUIRED_CHECKS = [
  "evidence/happy-path", "evidence/out-of-order", "evidence/remote-error", "evidence/timeout",
  "evidence/abort", "evidence/server-exit", "rubric/id-matching", "rubric/lifecycle",
  "rubric/process", "rubric/handshake", "probe/orphans",
] as const;

export function anchorsOf(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/<a id="([\w-]+)"><\/a>/g)].map((m) => m[1]!));
}
