export { McpClient, McpError } from "./borrowed.ts";
