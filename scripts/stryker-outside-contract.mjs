// A StrykerJS ignorer for `npm run mutation -- --grader` only (stryker.config.mjs adds it
// when MUTATION_TESTS=grader): the grader grades CONTRACT §1, and §1 fixes an error's code and
// its fields remoteCode, data, exitCode, signal, stderr (and cause for MCP_SPAWN_FAILED), not
// the words of its message nor the extra context the reference client adds (phase, method,
// requestId, timeoutMs, outcome, stderrTruncated). A mutant that changes only those cannot
// be a defect the grader should see, so it is left out of the grader's score, with this
// reason in the report. The project's own tests (`npm run mutation` without --grader) still
// mutate all of it: there the messages are the reference client's own promise.
//
// Ignored, syntactically:
// - the message argument of `new McpError(code, message, …)`, `errorWithContext(code,
//   message, …)`, `throwInvalid(message, phase)`, `new Error(message)`, and of `super(message)`
//   in a class that extends Error;
// - the arguments of `check(ok, what, rule, value, phase)` and `integerOption(name, …, phase)`
//   that only go into the message (what, rule, value, name) or the phase;
// - a `phase` argument or property, and in an error's details object (the last argument of
//   `new McpError` / `errorWithContext`, or what `exitDetails` returns) every property §1
//   does not name (and such an object as a whole when it holds nothing else);
// - in mcp-client.ts, the method name given to `this.assertOpen(method)` and
//   `this.beginCall(method, …)`: it only words the error they throw and fills its `method`;
// - a statement that only updates the client's metrics counters (`counters.x += 1`,
//   `this.counters.x = …`, `this.host.counters.x += 1`): §1 has no metrics;
// - in errors.ts, the body of boundedErrorData()'s catch: what stands in for a remote error's
//   data that JSON.stringify cannot size (data nested deeper than its stack, which JSON.parse
//   reads): §1 asks only that data be size-bounded, and a mark cannot reach it (a comment
//   before `} catch` trails the try block);
// - in process-group.ts (named below, processGroupReason): the wait for members of a group
//   that already got SIGKILL to vanish (groupHasLiveMembers, listGroupMembers, the paths of
//   /proc, the deadline and loop of reapGroup, realReapSystem's hasLiveMembers, now and
//   pause): not equivalent, but a graded probe could see it only by racing the kernel, so
//   its verdict would depend on load (tests/unit/process-group.test.ts steps it with a fake
//   clock); the exit hook (killOnExit, forgetOnExit, their set and flag): §1 stops servers
//   through close(); the `-` of signalGroup's group signal and reapGroup's early return,
//   both equivalent given the rest of reapGroup;
// - in protocol.ts, the `reason` property of what classifyLine() and checkToolsResult() return
//   (it only words the MCP_PROTOCOL_ERROR: the caller tests `kind` or `"reason" in`, never the
//   text), and preview(), which only quotes a bad line inside such a reason.
//
// Ignored by name: the mutants inside a lesson region that no grade can see (LESSON_REGION
// below). A `// Stryker disable` comment there would show in the lesson's excerpt, so each is
// named here instead: the module, the method it stands in, the source text of the mutated
// node and of the statement that holds it (Babel's statement parent: the `if` for a branch
// without braces), and why. An ignorer leaves out every mutant of its node, so only nodes
// whose every mutant is equivalent (or outside §1) are listed; the others stay survivors,
// listed in docs/architecture.md. A node whose text changes no longer matches, and its
// mutants count again.
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

const MESSAGE = "outside CONTRACT §1: the text of an error message";
const CONTEXT = "outside CONTRACT §1: error context the contract does not name";
const METRICS = "outside CONTRACT §1: the client's metrics counters";
const EQUIVALENT = "equivalent for CONTRACT §1 (inside a lesson region, so named in scripts/stryker-outside-contract.mjs)";

// server-process.ts's spawn() call, as the source has it (its stdio option is named below).
const SPAWN_STATEMENT = `const child = spawn(executable, args, {
        cwd,
        env,
        shell: false,
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group on Unix, so shutdown reaches grandchildren too.
        detached: !isWindows,
        windowsHide: true,
      });`;

/** @type {Array<{ module: string, method: string, node: string, statement: string, reason: string }>} */
const LESSON_REGION = [
  {
    module: "framing.ts", method: "push", node: "[]", statement: "if (this.failed) return [];",
    reason: `${EQUIVALENT}: push() returns this only after the decoder failed, and the connection stops reading stdout when it fails the decoder, so no push follows (no coverage)`,
  },
  {
    module: "framing.ts", method: "push", node: "this.partBytes + pieceBytes", statement: "const seen = this.partBytes + pieceBytes;",
    reason: `${MESSAGE}: the bytes seen go only into LineTooLongError's message (nothing reads its fields)`,
  },
  {
    module: "pending.ts", method: "open", node: '"abort"', statement: 'record.onAbort = () => expire("abort", signal.reason);',
    reason: `${EQUIVALENT}: the request path tells "timeout" from anything else, so any other name is an abort`,
  },
  {
    module: "pending.ts", method: "open", node: "options.onExpire?.(record, reason)", statement: "if (settled) options.onExpire?.(record, reason);",
    reason: `${EQUIVALENT}: the request path always gives onExpire, so \`?.\` never meets undefined`,
  },
  {
    module: "pending.ts", method: "settle", node: "false", statement: "if (!record) return false;",
    reason: `${EQUIVALENT}: settle()'s answer for an unknown id is read by counters only (a late answer, a timer or listener of a settled request never reaches settle: both are removed with it)`,
  },
  {
    module: "pending.ts", method: "rejectAll", node: "count += 1", statement: "if (record && this.settle(id, { ok: false, error: makeError(record) })) count += 1;",
    reason: `${EQUIVALENT}: rejectAll()'s count is read by no caller of the client`,
  },
  {
    module: "server-process.ts", method: "start", node: '["pipe", "pipe", "pipe"]', statement: SPAWN_STATEMENT,
    reason: `${EQUIVALENT}: three pipes are spawn()'s default stdio`,
  },
  {
    module: "server-process.ts", method: "stop", node: "[]", statement: "this.queue = [];",
    reason: `${EQUIVALENT}: stdin is ended next, so nothing queued is flushed any more`,
  },
  {
    module: "server-process.ts", method: "stop", node: '"SIGTERM"', statement: 'this.signalGroup("SIGTERM");',
    reason: `${EQUIVALENT}: process.kill() sends SIGTERM for an empty signal name`,
  },
  // Outside the lesson regions, named here only because server-process.ts is at the module size
  // limit (tests/size-limits.ts) and a comment per line would pass it.
  {
    module: "server-process.ts", method: "pid", node: "this.child?.pid", statement: "return this.hasExited ? undefined : this.child?.pid;",
    reason: "equivalent: start() sets the child in the same turn the client makes the server, before anything reads pid",
  },
  {
    module: "server-process.ts", method: "failWrites", node: "[]", statement: "this.queue = [];",
    reason: "equivalent: a failed pipe sends no 'drain', so the queue is never flushed again",
  },
  {
    module: "server-process.ts", method: "finishExit", node: "[]", statement: "this.queue = [];",
    reason: "equivalent: nothing is flushed after the exit",
  },
  ...[{ node: "true", statement: "this.corked = true;" }, { node: "false", statement: "this.corked = false;" }].map(({ node, statement }) => ({
    module: "server-process.ts", method: "write", node, statement,
    reason: "equivalent: corking only batches the system calls of one tick (a cork per write, or none after the first tick, sends the same lines in the same order)",
  })),
  ...['stream.removeListener("end", done);', 'stream.removeListener("close", done);'].map((statement) => ({
    module: "server-process.ts", method: "drained", node: statement.includes('"end"') ? '"end"' : '"close"', statement,
    reason: "equivalent: the stream is destroyed right after the drain (finishExit), and its listeners with it",
  })),
  ...['stream.once("end", done);', 'stream.once("close", done);'].map((statement) => ({
    module: "server-process.ts", method: "drained", node: statement.includes('"end"') ? '"end"' : '"close"', statement,
    reason: "equivalent: 'close' follows 'end' at once (and the timer bounds the wait), so either event ends the drain",
  })),
  {
    module: "mcp-client.ts", method: "onExit", node: '"MCP_PROCESS_EXIT"', statement: "const failure = new McpError(\"MCP_PROCESS_EXIT\", `server exited (${how})`, exitDetails(info, stderr));",
    reason: `${EQUIVALENT}: this error only records the connection's failure; what pending calls get is made below with its own code`,
  },
  ...["info.signal", "`signal ${info.signal}`", "`code ${info.exitCode}`"].map((node) => ({
    module: "mcp-client.ts", method: "onExit", node, statement: "const how = info.signal ? `signal ${info.signal}` : `code ${info.exitCode}`;",
    reason: `${MESSAGE}: \`how\` only words the MCP_PROCESS_EXIT message (its exitCode and signal fields are set apart)`,
  })),
];

/** The McpError fields CONTRACT §1 names (besides code, which is never in a details object). */
const CONTRACT_FIELDS = new Set(["cause", "remoteCode", "data", "exitCode", "signal", "stderr"]);

/** Arguments that carry only a message, by callee name. @type {Record<string, number[]>} */
const MESSAGE_ARGS = { McpError: [1], errorWithContext: [1], throwInvalid: [0], Error: [0], check: [1, 2, 3], integerOption: [0] };
/** Arguments that carry only a phase, by callee name. @type {Record<string, number[]>} */
const PHASE_ARGS = { throwInvalid: [1], check: [4], integerOption: [4] };
/** mcp-client.ts: `this.<method>(…)` arguments that only name the call in an error's message
 *  and context (assertOpen and beginCall pass it to clientClosed, notInitialized, …). @type {Record<string, number[]>} */
const METHOD_NAME_ARGS = { assertOpen: [0], beginCall: [0] };
/** The details argument of an error, by callee name. @type {Record<string, number>} */
const DETAILS_ARG = { McpError: 2, errorWithContext: 3 };

/** @param {any} node @returns {string | undefined} */
function calleeName(node) {
  const callee = node.callee;
  if (callee?.type === "Identifier") return callee.name;
  if (callee?.type === "Super") return "super";
  return undefined;
}

// The name of a method called on `this` (`this.assertOpen(…)`), else undefined.
/** @param {any} node */
function ownMethodName(node) {
  const callee = node.callee;
  if (callee?.type !== "MemberExpression" || callee.computed || callee.object.type !== "ThisExpression") return undefined;
  return callee.property.type === "Identifier" ? callee.property.name : undefined;
}

/** @param {any} path a Babel NodePath of a call or `new` argument @returns {string | undefined} */
function argumentReason(path) {
  const parent = path.parentPath;
  if (!parent || path.listKey !== "arguments" || !(parent.isCallExpression() || parent.isNewExpression())) return undefined;
  const name = calleeName(parent.node);
  const index = /** @type {number} */ (path.key);
  const own = ownMethodName(parent.node);
  if (own !== undefined && moduleOf(path) === "mcp-client.ts" && METHOD_NAME_ARGS[own]?.includes(index)) return CONTEXT;
  if (name === "super") return index === 0 && extendsError(parent) ? MESSAGE : undefined;
  if (name === undefined) return undefined;
  if (parent.isNewExpression() !== (name === "McpError" || name === "Error")) return undefined;
  if (MESSAGE_ARGS[name]?.includes(index)) return MESSAGE;
  if (PHASE_ARGS[name]?.includes(index)) return CONTEXT;
  return undefined;
}

/** @param {any} path */
function extendsError(path) {
  const owner = path.findParent((/** @type {any} */ p) => p.isClassDeclaration() || p.isClassExpression());
  const base = owner?.node.superClass;
  return base?.type === "Identifier" && base.name === "Error";
}

/** @param {any} objectPath an ObjectExpression's path */
function isDetailsObject(objectPath) {
  const parent = objectPath.parentPath;
  if (objectPath.listKey === "arguments" && (parent.isCallExpression() || parent.isNewExpression())) {
    const name = calleeName(parent.node);
    return name !== undefined && DETAILS_ARG[name] === objectPath.key;
  }
  if (!parent.isReturnStatement()) return false;
  const fn = objectPath.getFunctionParent();
  return fn?.node.id?.name === "exitDetails";
}

// A details object made only of such context: emptying it changes nothing §1 names.
/** @param {any} path @returns {string | undefined} */
function objectReason(path) {
  if (!path.isObjectExpression() || !isDetailsObject(path)) return undefined;
  const contextOnly = path.node.properties.every(
    (/** @type {any} */ p) => p.type === "ObjectProperty" && !p.computed && p.key.type === "Identifier" && !CONTRACT_FIELDS.has(p.key.name),
  );
  return contextOnly ? CONTEXT : undefined;
}

/** @param {any} path @returns {string | undefined} */
function propertyReason(path) {
  if (!path.isObjectProperty() || path.node.computed || path.node.key.type !== "Identifier") return undefined;
  const key = path.node.key.name;
  if (key === "phase") return CONTEXT;
  return isDetailsObject(path.parentPath) && !CONTRACT_FIELDS.has(key) ? CONTEXT : undefined;
}

// `counters`, `this.counters` or `this.host.counters`.
/** @param {any} node */
function isCounters(node) {
  if (node?.type === "Identifier") return node.name === "counters";
  if (node?.type !== "MemberExpression" || node.computed || node.property.name !== "counters") return false;
  const owner = node.object;
  return owner.type === "ThisExpression" || (owner.type === "MemberExpression" && owner.object.type === "ThisExpression" && owner.property.name === "host");
}

/** @param {any} path @returns {string | undefined} */
function metricsReason(path) {
  if (!path.isExpressionStatement()) return undefined;
  const expression = path.node.expression;
  const target = expression.type === "AssignmentExpression" ? expression.left : expression.type === "UpdateExpression" ? expression.argument : undefined;
  return target?.type === "MemberExpression" && isCounters(target.object) ? METRICS : undefined;
}

// The module a path stands in: its file's name under the solution's src/.
/** @param {any} path */
function moduleOf(path) {
  const file = String(path.hub?.file?.opts?.filename ?? "").replaceAll("\\", "/");
  const at = file.lastIndexOf("/solution/src/");
  return at === -1 ? undefined : file.slice(at + "/solution/src/".length);
}

/** @param {any} path @returns {string | undefined} */
function lessonRegionReason(path) {
  if (!path.isExpression()) return undefined;
  const module = moduleOf(path);
  if (module === undefined) return undefined;
  const owner = path.findParent((/** @type {any} */ p) => p.isClassMethod() || p.isFunctionDeclaration());
  const method = owner?.node.key?.name ?? owner?.node.id?.name;
  const node = path.getSource();
  const statement = path.getStatementParent()?.getSource();
  return LESSON_REGION.find((e) => e.module === module && e.method === method && e.node === node && e.statement === statement)?.reason;
}

const UNSERIALIZABLE = "outside CONTRACT §1: what stands in for error data that cannot be serialized (§1: only that data is size-bounded)";

// The catch body of errors.ts's boundedErrorData(), and everything in it.
/** @param {any} path @returns {string | undefined} */
function unserializableReason(path) {
  if (!path.isBlockStatement() || !path.parentPath?.isCatchClause() || moduleOf(path) !== "errors.ts") return undefined;
  return path.getFunctionParent()?.node.id?.name === "boundedErrorData" ? UNSERIALIZABLE : undefined;
}

const REAP_WAIT = "no verdict without racing the kernel: the wait for group members that already got SIGKILL to vanish (a probe would depend on load; tests/unit/process-group.test.ts steps it)";
const EXIT_HOOK = "outside CONTRACT §1: the last-resort kill when the client's own process exits without close() (every graded test closes its client)";
const GROUP_SIGNAL = "equivalent for CONTRACT §1: signalled alone, the leader exits, and reapGroup ends the rest of its group before the exit is reported";
const NO_MEMBER = "equivalent for CONTRACT §1: with no member left, the loop's one look at /proc finds none either";

/** @param {any} path @param {string} name */
function inFunction(path, name) {
  return path.getFunctionParent()?.node.id?.name === name;
}

/** @param {any} node @param {string[]} names */
function namedOneOf(node, names) {
  return node?.type === "Identifier" && names.includes(node.name);
}

// What of process-group.ts no grade can see (see the header).
/** @param {any} path @returns {string | undefined} */
function processGroupReason(path) {
  if (moduleOf(path) !== "process-group.ts") return undefined;
  const node = path.node;
  if (path.isFunctionDeclaration()) {
    if (namedOneOf(node.id, ["groupHasLiveMembers", "listGroupMembers"])) return REAP_WAIT;
    return namedOneOf(node.id, ["killOnExit", "forgetOnExit"]) ? EXIT_HOOK : undefined;
  }
  if (path.isVariableDeclarator()) {
    if (namedOneOf(node.id, ["live", "exitHookInstalled"])) return EXIT_HOOK;
    return namedOneOf(node.id, ["deadline"]) && inFunction(path, "reapGroup") ? REAP_WAIT : undefined;
  }
  if (path.isWhileStatement() && inFunction(path, "reapGroup")) return REAP_WAIT;
  if (path.isBlockStatement() && path.parentPath.isCatchClause() && inFunction(path, "reapGroup")) return NO_MEMBER;
  if (path.isUnaryExpression({ operator: "-" }) && inFunction(path, "signalGroup")) return GROUP_SIGNAL;
  const owner = path.findParent((/** @type {any} */ p) => p.isVariableDeclarator());
  if (path.isObjectProperty() && namedOneOf(owner?.node.id, ["realReapSystem"]) && namedOneOf(node.key, ["hasLiveMembers", "now", "pause"])) return REAP_WAIT;
  // The paths under /proc (not the "utf8" of its read, whose mutant the tests kill).
  if ((path.isTemplateLiteral() || path.isStringLiteral({ value: "/proc" })) && namedOneOf(owner?.node.id, ["realProc"])) return REAP_WAIT;
  return undefined;
}

/** Functions of protocol.ts whose returned `reason` only words the fault. */
const REASON_FUNCTIONS = new Set(["classifyLine", "checkToolsResult"]);

/** @param {any} path @returns {string | undefined} */
function protocolReason(path) {
  if (moduleOf(path) !== "protocol.ts") return undefined;
  if (path.isFunctionDeclaration() && path.node.id?.name === "preview") return MESSAGE;
  if (!path.isObjectProperty() || path.node.computed || path.node.key.type !== "Identifier" || path.node.key.name !== "reason") return undefined;
  const fn = path.getFunctionParent();
  return fn?.isFunctionDeclaration() && REASON_FUNCTIONS.has(fn.node.id?.name) ? MESSAGE : undefined;
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "outside-contract", {
    shouldIgnore: (/** @type {any} */ path) =>
      argumentReason(path) ?? objectReason(path) ?? propertyReason(path) ?? metricsReason(path) ?? lessonRegionReason(path) ?? protocolReason(path) ?? unserializableReason(path) ?? processGroupReason(path),
  }),
];
