import { afterAll, beforeAll } from "vitest";
import { connectNatsBus } from "../../../runtime/bus/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { skillGateSuite } from "./skillGateSuite.ts";

describeWithNats("skill-gate actors on a real nats-server", () => {
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterAll(async () => {
    await server?.dispose();
  });
  skillGateSuite(async (cluster) => {
    // Two connections, as two nodes: the actors on one, the chain on the other.
    const gateNode = await connectNatsBus({ servers: server.url, cluster, name: "gate-node", storage: "memory" });
    const soulNode = await connectNatsBus({ servers: server.url, cluster, name: "soul-node", storage: "memory" });
    return { server: gateNode, client: soulNode };
  });
});
