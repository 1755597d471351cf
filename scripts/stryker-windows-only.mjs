// A StrykerJS ignorer (stryker.config.mjs, `ignorers: ["windows-only"]`): the mutation run
// happens on Linux, where code that only runs on Windows never runs, so its mutants could
// never be killed there. Ignored: the branch taken when `isWindows` is true (of an `if` or a
// `?:` whose test is exactly `isWindows`) and the `windowsHide` spawn option. Such code
// sometimes stands inside a lesson region, where a `// Stryker disable` comment would show
// in the lesson.
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

const REASON = "Windows only: the mutation run is on Linux, where this never runs";

/** @param {any} path a Babel NodePath */
function windowsOnly(path) {
  const parent = path.parentPath;
  if (!parent) return false;
  const windowsTest = () => parent.node.test?.type === "Identifier" && parent.node.test.name === "isWindows";
  if ((parent.isConditionalExpression() || parent.isIfStatement()) && path.key === "consequent") return windowsTest();
  return path.isObjectProperty() && path.node.key.type === "Identifier" && path.node.key.name === "windowsHide";
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "windows-only", {
    shouldIgnore: (/** @type {any} */ path) => (windowsOnly(path) ? REASON : undefined),
  }),
];
