// The sandbox's users (index.ts): the grader's user's block of subordinate ids a user-namespace
// sandbox maps, whether the sandbox's own users could read the project at all, and the two
// users each payload gets where it has users (as real root, or with such a block mapped).
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";
import { procPids } from "../procs.ts";

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
  const uid = idBlockStart(readOr("/etc/subuid"), user.username, user.uid);
  const gid = idBlockStart(readOr("/etc/subgid"), user.username, user.uid);
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
/** Pairs are picked from here up to 65531 inside a user namespace with subordinate ids (1 to SANDBOX_UID mapped), and by a root whose own user namespace (a container's) does not map the range above. */
export const MAPPED_ID_MIN = 1000;
const LOW_ID_PAIRS = Math.floor((SANDBOX_UID - 2 - MAPPED_ID_MIN) / 2);

/** What a pick looks at, each read from the system unless given (the tests give them). */
export interface PickSources {
  random?: () => number;
  /** Real uids of running processes (realUidsInUse). */
  inUse?: () => Set<number>;
  /** This process's /proc/self/uid_map and gid_map: which ids its user namespace has (null: no such file, a kernel without user namespaces, where every id is this namespace's). */
  uidMap?: string | null;
  gidMap?: string | null;
  /** Ids the user and group databases name (/etc/passwd, /etc/group). */
  named?: () => Set<number>;
  /** Ids (as picked) already given to payloads still running. */
  taken?: ReadonlySet<number>;
}

// Users for one payload, picked at random among ids no running process holds (its real uid,
// as this namespace sees it) and no payload of this process was given (`taken`): the kernel counts RLIMIT_NPROC per user on the whole machine,
// so payloads sharing a user would share one limit, and a payload that fills it would keep
// every other grade's processes (a --batch, two graders on one machine) from starting.
// - `block` given (a user namespace that will map it as ids 1 to SANDBOX_UID): a pair from
//   MAPPED_ID_MIN to 65531 inside, checked against the real ids they map to.
// - Root: a pair of the range above (ROOT_ID_BASE) where this process's own user namespace maps
//   it (always, outside containers); in one that maps fewer ids (a container's, often 65 536
//   of them), a pair from MAPPED_ID_MIN to 65531 that it maps and that /etc/passwd and
//   /etc/group do not name; with neither, nobody's 65534 and 65533 as before (so too where
//   the map cannot be read). A kernel built without user namespaces has no map: every id is
//   this namespace's.
// Up to 16 draws; the last one stands regardless.
export function pickPayloadUsers(block?: IdBlock, sources: PickSources = {}): PayloadUsers {
  const random = sources.random ?? Math.random;
  const live = (sources.inUse ?? realUidsInUse)();
  const ranges = (file: string, given: string | null | undefined) => mappedRanges((given === undefined ? systemMap(file) : given) ?? "0 0 4294967295");
  const mapped = block ? undefined : [ranges("/proc/self/uid_map", sources.uidMap), ranges("/proc/self/gid_map", sources.gidMap)];
  const covers = (first: number, end: number) => !mapped || mapped.every((list) => list.some(([a, b]) => a <= first && end <= b));
  const high = !block && covers(ROOT_ID_BASE, ROOT_ID_BASE + 2 * ROOT_ID_PAIRS);
  if (!block && !high && !covers(MAPPED_ID_MIN, MAPPED_ID_MIN + 2 * LOW_ID_PAIRS)) return { uid: SANDBOX_UID, hostUid: SANDBOX_UID - 1 };
  const named = !block && !high ? (sources.named ?? namedIds)() : new Set<number>();
  let pick: PayloadUsers = { uid: 0, hostUid: 0 };
  for (let draw = 0; draw < 16; draw++) {
    const uid = high ? ROOT_ID_BASE + 2 * Math.floor(random() * ROOT_ID_PAIRS) : MAPPED_ID_MIN + 2 * Math.floor(random() * LOW_ID_PAIRS);
    pick = { uid, hostUid: uid + 1 };
    const outside = block ? [block.uid + uid - 1, block.uid + uid] : [uid, uid + 1];
    const free = (id: number) => !named.has(id) && !sources.taken?.has(id);
    if (!outside.some((id) => live.has(id)) && free(uid) && free(uid + 1)) break;
  }
  return pick;
}

/** The ids a user namespace has, as [first, end) ranges (adjacent lines merged), from /proc/<pid>/uid_map (or gid_map) text: "inside outside count" per line. */
export function mappedRanges(text: string): Array<[number, number]> {
  const lines: Array<[number, number]> = [];
  for (const line of text.split("\n")) {
    const [inside, , count] = line.trim().split(/\s+/).map(Number);
    if (Number.isSafeInteger(inside) && Number.isSafeInteger(count) && count! > 0) lines.push([inside!, inside! + count!]);
  }
  const out: Array<[number, number]> = [];
  for (const [first, end] of lines.sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && first <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([first, end]);
  }
  return out;
}

// A map of this process's (/proc/self/uid_map or gid_map): null where /proc is there and the
// map is not (a kernel without user namespaces); "" (no id, so nobody's pair) where it cannot
// be read at all.
function systemMap(file: string): string | null {
  if (existsSync("/proc/self/status") && !existsSync(file)) return null;
  return readOr(file);
}

// The ids /etc/passwd and /etc/group name (their third field).
function namedIds(): Set<number> {
  const out = new Set<number>();
  for (const file of ["/etc/passwd", "/etc/group"]) {
    for (const line of readOr(file).split("\n")) {
      const id = Number(line.split(":")[2]);
      if (line && Number.isSafeInteger(id)) out.add(id);
    }
  }
  return out;
}

function readOr(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

// The real uid of every process this process can see in /proc (processes that end while it
// reads are skipped).
export function realUidsInUse(): Set<number> {
  const out = new Set<number>();
  for (const pid of procPids()) {
    try {
      const line = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (line) out.add(Number(line[1]));
    } catch {
      // gone
    }
  }
  return out;
}
