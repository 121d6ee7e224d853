import { afterAll, beforeAll } from "vitest";
import { connectNatsBus } from "../../../runtime/bus/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { busContract } from "./busContract.ts";

describeWithNats("Bus contract: NATS bus (real nats-server)", () => {
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterAll(async () => {
    await server?.dispose();
  });
  busContract(async (cluster, onHandlerError) => connectNatsBus({ servers: server.url, cluster, onHandlerError }));
});
