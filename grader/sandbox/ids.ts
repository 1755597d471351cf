// The ids a user-namespace sandbox maps (index.ts): the grader's user's block of subordinate
// ids, and whether the sandbox's own users could read the project at all.
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";

/** The unprivileged user the payload runs as when the grader is real root, or has subordinate ids (nobody); a block must hold ids 1 to this. */
export const SANDBOX_UID = 65534;

/** A block of subordinate ids (/etc/subuid, /etc/subgid): where each starts outside, and how many. */
export interface IdBlock {
  uid: number;
  gid: number;
  count: number;
}

// The grader's user's first block of subordinate ids that holds the sandbox's users (ids 1 to
// SANDBOX_UID inside), where newuidmap and newgidmap are on the PATH; undefined otherwise.
export function subordinateIds(): IdBlock | undefined {
  const dirs = (process.env.PATH ?? "/usr/bin:/bin").split(":").filter(Boolean);
  if (!["newuidmap", "newgidmap"].every((tool) => dirs.some((dir) => existsSync(join(dir, tool))))) return undefined;
  let user: { uid: number; username: string };
  try {
    user = userInfo();
  } catch {
    return undefined;
  }
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const uid = idBlockStart(read("/etc/subuid"), user.username, user.uid);
  const gid = idBlockStart(read("/etc/subgid"), user.username, user.uid);
  return uid === undefined || gid === undefined ? undefined : { uid, gid, count: SANDBOX_UID };
}

/** Where the first block of `text` (/etc/subuid's format, `name:start:count`) for this user that holds SANDBOX_UID ids starts. */
export function idBlockStart(text: string, username: string, uid: number): number | undefined {
  for (const line of text.split("\n")) {
    const [name, start, count] = line.trim().split(":");
    if (name !== username && name !== String(uid)) continue;
    const first = Number(start);
    const size = Number(count);
    if (/^\d+$/.test(start ?? "") && /^\d+$/.test(count ?? "") && size >= SANDBOX_UID && first > 0) return first;
  }
  return undefined;
}

// Can a user who is neither owner nor group member traverse to `dir` and its packages? The
// sandbox's own users (root mode, or mapped subordinate ids) read the project as such a user.
export function reachableByOthers(dir: string): boolean {
  const targets = [dir];
  try {
    targets.push(realpathSync(join(dir, "node_modules")));
  } catch {
    // no packages to reach
  }
  for (const target of targets) {
    for (let d = target; ; d = dirname(d)) {
      try {
        if ((statSync(d).mode & 0o005) !== 0o005) return false;
      } catch {
        return false;
      }
      if (dirname(d) === d) break;
    }
  }
  return true;
}

