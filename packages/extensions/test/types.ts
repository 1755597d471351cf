// Types the package's tests name, from where the package defines them.
export type { SecretLease } from "../src/manager.ts";
export type { ServerNotification } from "../../../labs/33-mcp-lite/solution/src/options.ts";
