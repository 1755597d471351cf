// The sandbox's users (index.ts): the grader's user's block of subordinate ids a user-namespace
// sandbox maps, whether the sandbox's own users could read the project at all, and the two
// users each payload gets where it has users (as real root, or with such a block mapped).
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";

/** A block of subordinate ids must hold ids 1 to this (nobody); also the capless payload's nominal uid where it has no users of its own. */
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


/** The two users of one payload: its own (workers, the import check) and its client hosts' (in the payload user's group). */
export interface PayloadUsers {
  uid: number;
  hostUid: number;
}

/**
 * As real root, payloads take their users from here: systemd's table of id ranges leaves
 * 1879048192 to 2147352575 unused, and no distribution assigns them. Two ids per payload.
 */
export const ROOT_ID_BASE = 0x7000_0000;
/** Pairs a root payload picks among (up to 0x71ffffff). */
export const ROOT_ID_PAIRS = 1 << 24;
/** In a user namespace with subordinate ids (1 to SANDBOX_UID mapped): the pairs start here, below the ids named users hold (65534 nobody). */
export const MAPPED_ID_MIN = 1000;
const MAPPED_ID_PAIRS = Math.floor((SANDBOX_UID - 2 - MAPPED_ID_MIN) / 2);

// Users for one payload, picked at random among ids no running process holds (its real uid,
// as this namespace sees it): the kernel counts RLIMIT_NPROC per user on the whole machine,
// so payloads sharing a user would share one limit, and a payload that fills it would keep
// every other grade's processes (a --batch, two graders on one machine) from starting. With
// `block` the ids are those inside a user namespace mapping the block (ids 1 to SANDBOX_UID),
// checked against the real ids they map to. Up to 16 draws; the last one stands regardless.
export function pickPayloadUsers(block?: IdBlock, random: () => number = Math.random, inUse: () => Set<number> = realUidsInUse): PayloadUsers {
  const live = inUse();
  let pick: PayloadUsers = { uid: 0, hostUid: 0 };
  for (let draw = 0; draw < 16; draw++) {
    const slot = Math.floor(random() * (block ? MAPPED_ID_PAIRS : ROOT_ID_PAIRS));
    const uid = (block ? MAPPED_ID_MIN : ROOT_ID_BASE) + 2 * slot;
    pick = { uid, hostUid: uid + 1 };
    const outside = block ? [block.uid + uid - 1, block.uid + uid] : [uid, uid + 1];
    if (!outside.some((id) => live.has(id))) break;
  }
  return pick;
}

// The real uid of every process this process can see in /proc (processes that end while it
// reads are skipped).
export function realUidsInUse(): Set<number> {
  const out = new Set<number>();
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const line = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, "utf8"));
      if (line) out.add(Number(line[1]));
    } catch {
      // gone
    }
  }
  return out;
}
