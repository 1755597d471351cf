// The sandboxes the sandbox tests run in on this machine: "root" (the grader is real root),
// "user" (a user namespace, only the grader's own user mapped: the payload and the hosts are
// its capless uid 0) and "mapped" (a user namespace with the subordinate ids of the user
// running the tests mapped, where it has a block in /etc/subuid and /etc/subgid and uidmap is
// installed: the payload and the hosts then get users of their own, as under root).
import { spawnSync } from "node:child_process";
import { sandboxSupport, subordinateIds } from "../../grader/sandbox/index.ts";

export const support = sandboxSupport();
export const userNamespaces =
  process.platform === "linux" && spawnSync("/usr/bin/unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount", "/bin/true"], { timeout: 5_000 }).status === 0;
const idBlock = userNamespaces ? subordinateIds() : undefined;
export const kinds = [...(support.kind === "root" ? (["root"] as const) : []), ...(userNamespaces ? (["user"] as const) : []), ...(idBlock ? (["mapped"] as const) : [])];
export type Kind = (typeof kinds)[number];

/** The payload options of a kind: the sandbox, and the ids it maps. */
export const sandboxOf = (kind: Kind) => ({ sandbox: kind === "mapped" ? ("user" as const) : kind, ids: kind === "mapped" ? idBlock : kind === "user" ? null : undefined });
