// A package-lock.json for a throwaway consumer project, cut from this repository's own
// lockfile, so `npm ci --offline` installs the packed tarball and its dependencies from the
// npm cache alone (after the repository's `npm ci`, every tarball of its lockfile is cached,
// and npm finds each by its integrity). The consumer's root dependencies are the packed
// tarball plus packages named here; each is followed through `dependencies` and resolved
// the way Node would (nearest node_modules first), keeping the repository's layout.
import { readFileSync } from "node:fs";
import { join } from "node:path";

interface LockEntry {
  version?: string;
  integrity?: string;
  resolved?: string;
  dependencies?: Record<string, string>;
  [key: string]: unknown;
}

export function consumerLock(
  root: string,
  tarball: { name: string; version: string; file: string; dependencies: Record<string, string> },
  extra: string[],
  registry = "https://registry.npmjs.org/",
): object {
  const repo = (JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages;
  const rootDeps: Record<string, string> = { [tarball.name]: `file:${tarball.file}` };
  const packages: Record<string, LockEntry> = {
    [`node_modules/${tarball.name}`]: { version: tarball.version, resolved: `file:${tarball.file}`, dependencies: tarball.dependencies },
  };
  const visit = (from: string, name: string) => {
    const key = resolve(repo, from, name);
    if (packages[key]) return;
    const { version, integrity, dependencies, engines, bin, license } = repo[key]!;
    // The tarball's registry address: without it npm asks the registry for the package's
    // metadata first, which an offline install cannot do. With it (and the integrity) the
    // tarball comes out of the cache.
    const resolved = repo[key]!.resolved ?? tarballUrl(registry, name, version!);
    packages[key] = { version, integrity, resolved, dependencies, engines, bin, license };
    for (const dep of Object.keys(dependencies ?? {})) visit(key, dep);
  };
  for (const dep of Object.keys(tarball.dependencies)) visit(`node_modules/${tarball.name}`, dep);
  for (const name of extra) {
    const key = resolve(repo, "", name);
    rootDeps[name] = repo[key]!.version!;
    visit("", name);
  }
  for (const entry of Object.values(packages)) for (const field of Object.keys(entry)) if (entry[field] === undefined) delete entry[field];
  return { name: "consumer", version: "1.0.0", lockfileVersion: 3, requires: true, packages: { "": { name: "consumer", version: "1.0.0", dependencies: rootDeps }, ...packages } };
}

// Where a registry keeps `name`'s tarball at `version` (the npm registry's layout).
function tarballUrl(registry: string, name: string, version: string): string {
  const base = name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
  return `${registry.replace(/\/?$/, "/")}${name}/-/${base}-${version}.tgz`;
}

// The lock key Node would load `name` from, seen from the package at lock key `from`.
function resolve(repo: Record<string, LockEntry>, from: string, name: string): string {
  for (let base = from; ; ) {
    const key = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
    if (repo[key] && !repo[key].link) return key;
    if (base === "") throw new Error(`${name} (needed by ${from || "the consumer"}) is not in the repository's lockfile`);
    const at = base.lastIndexOf("/node_modules/");
    base = at < 0 ? "" : base.slice(0, at);
  }
}

/** The root entry's dependencies, for the consumer's package.json. */
export function rootDependencies(lock: object): Record<string, string> {
  return (lock as { packages: Record<string, { dependencies: Record<string, string> }> }).packages[""]!.dependencies;
}
