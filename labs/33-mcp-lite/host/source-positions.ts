// Maps positions in a bundle (file:line:col, as in a stack frame) to the files it was built
// from, through the bundle's inline source map, read once and only when first needed. A text
// without such positions, or a module that is not a bundle, comes back unchanged.

import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export function sourcePositions(bundle: string): (text: string) => string {
  if (!bundle.endsWith(".mjs")) return (text) => text;
  let map: SourceMap | null | undefined;
  const load = () => {
    if (map !== undefined) return map;
    try {
      const source = readFileSync(bundle, "utf8");
      const inline = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/.exec(source);
      map = inline ? new SourceMap(JSON.parse(Buffer.from(inline[1]!, "base64").toString("utf8"))) : null;
    } catch {
      map = null;
    }
    return map;
  };
  const escaped = [bundle, pathToFileURL(bundle).href].map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  const position = new RegExp(`(?:${escaped}):(\\d+):(\\d+)`, "g");
  return (text) =>
    text.replace(position, (whole, line: string, col: string) => {
      const found = load()?.findEntry(Number(line) - 1, Number(col) - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
      if (!found?.originalSource || found.originalLine === undefined) return whole;
      const file = found.originalSource.startsWith("file:") ? fileURLToPath(found.originalSource) : resolve(dirname(bundle), found.originalSource);
      return `${file}:${found.originalLine + 1}:${(found.originalColumn ?? 0) + 1}`;
    });
}
