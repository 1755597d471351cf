// @ts-check
// What the package's test servers share: their flags, and stdin read as newline-delimited
// JSON messages, each handed to the server's handler in order.

const argv = process.argv.slice(2);

/** The value after `name` on the command line, if any. @param {string} name */
export function flag(name) {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

/** Calls `handle` with each JSON message on stdin, in order. @param {(message: any) => void} handle */
export function onMessages(handle) {
  let buffered = "";
  process.stdin.on("data", (chunk) => {
    buffered += chunk.toString("utf8");
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim() !== "") handle(JSON.parse(line));
    }
  });
}
