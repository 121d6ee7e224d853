/**
 * The watches of shared contexts on a real nats-server (issue 23, item 9): a node whose soul
 * used many shared contexts, one per conversation, does not keep one JetStream consumer per
 * context name for its life. Once unused for `runtime.sharedContexts.idleMs`, each context's
 * watch is closed and its consumer goes; a later use opens it again and sees the bucket as it is.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, useSharedContext, type MentalProcess } from "../../../actors/soul/index.ts";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { parseClusterConfig } from "../../../runtime/node/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive, uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { natsNodes } from "../../support/cluster/natsNodes.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";

const ROOMS = 30;

/** `visit <from> <to>`: marks a visit in each of the shared contexts room-<from> .. room-<to - 1>. */
const visiting: MentalProcess = async ({ workingMemory }) => {
  const [, from, to] = usePerceptions().invokingPerception.content.split(" ").map(Number);
  const seen: number[] = [];
  for (let i = from as number; i < (to as number); i++) {
    const room = useSharedContext(`room-${i}`);
    await room.ready;
    seen.push((await room.update<number>("visits", (n) => (n ?? 0) + 1)) as number);
  }
  useActions().speak(`visits ${seen.join(",")}`);
  return workingMemory;
};
const visitor = defineSoul({ name: "Visitor", persona: "Visits rooms.", initialProcess: visiting, processes: { visiting } });

describeWithNats("shared-context watches on a real nats-server", () => {
  const fixture = natsNodes();

  it("a context unused for idleMs closes its watch: the node holds no consumer per name it ever used", async () => {
    const cluster = uniqueCluster("watches");
    const config = parseClusterConfig({ cluster, souls: [{ id: "visitor", blueprint: visitor }], runtime: { sharedContexts: { idleMs: 1_000, maxOpen: 1_000 } } });
    await fixture.startNode({ config, nodeId: "a" });
    const bus = await fixture.client(cluster);
    const nc = await connect({ servers: fixture.server.url });
    const jsm = await jetstreamManager(nc);
    // A watch is a consumer delivering new writes only; a key listing (a context's view read
    // at its start) is a short-lived one of its own, which the server drops by itself.
    const watches = async () => {
      let n = 0;
      for await (const c of jsm.consumers.list(`KV_ensoul_${cluster}_shared`)) if (c.config.deliver_policy === "new") n++;
      return n;
    };
    const says = watchEnvelopes(bus, clusterSubjects(cluster).says("visitor"), "speech");
    try {
      const first = await perceive(bus, "visitor", `visit 0 ${ROOMS}`);
      const answer = await says.next((e) => e.body.final && e.causation === first.id, 30_000, "the first answer");
      expect(answer.body.text).toBe(`visits ${Array(ROOMS).fill(1).join(",")}`);
      // One watch per context while they are used...
      const idleSince = Date.now();
      expect(await watches()).toBe(ROOMS);
      // ...and none once they have been idle for idleMs (the sweep runs every second).
      let left = ROOMS;
      for (let polls = 0; polls < 60 && (left = await watches()) > 0; polls++) await new Promise((r) => setTimeout(r, 250));
      expect(left).toBe(0);
      expect(Date.now() - idleSince).toBeGreaterThanOrEqual(900);

      // Used again, a context opens afresh and reads the bucket as it is.
      const again = await perceive(bus, "visitor", "visit 0 2");
      const second = await says.next((e) => e.body.final && e.causation === again.id, 30_000, "the second answer");
      expect(second.body.text).toBe("visits 2,2");
      expect(await watches()).toBe(2);
    } finally {
      says.stop();
      await nc.close();
    }
  }, 60_000);
});
