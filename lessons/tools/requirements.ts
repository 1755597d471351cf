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

/** What a lesson must contain, per lab: its required anchors and the check ids its grades must report. */
export interface LessonRequirements {
  anchors: readonly string[];
  checks: readonly string[];
}

const BY_LAB: Record<string, LessonRequirements> = {
  "33-mcp-lite": { anchors: REQUIRED_ANCHORS, checks: REQUIRED_CHECKS },
  "13-process-boundary": {
    anchors: ["deliverable", "prerequisites", "principle", "lab", "no-shell", "output-cap", "timeout", "abort", "reap", "verify", "rubric", "next"],
    checks: ["evidence/happy-path", "evidence/no-shell", "evidence/output-cap", "evidence/timeout", "evidence/abort", "evidence/reaped", "probe/orphans"],
  },
};

// The requirements of one lab's lesson; a lab not listed here must still have every anchor
// its manifest's hints point to (checked separately).
export function requirementsFor(labId: string): LessonRequirements {
  return BY_LAB[labId] ?? { anchors: ["lab", "verify"], checks: [] };
}

export function anchorsOf(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/<a id="([\w-]+)"><\/a>/g)].map((m) => m[1]!));
}
