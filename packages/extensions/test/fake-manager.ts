// A ServerManager over fake clients on a hand-moved clock, for the manager's unit tests:
// each client the manager creates comes from `make` and is kept in `clients`, in order.
import { ServerManager, type ClientEvents, type ManagedClient, type ServerManagerOptions } from "../src/server-manager.ts";

export function managerOnFakes<C extends ManagedClient>(make: (events: ClientEvents) => C, options: Partial<ServerManagerOptions>) {
  let now = 1_000_000;
  const clients: C[] = [];
  const manager = new ServerManager({
    client: { executable: "node" },
    createClient: (_options, events) => {
      const client = make(events);
      clients.push(client);
      return client;
    },
    now: () => now,
    ...options,
  });
  return { manager, clients, advance: (ms: number) => void (now += ms) };
}
