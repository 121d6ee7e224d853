/**
 * The soul store on a node: documents written by a soul's turns are recalled by its memory
 * integrator after the node passivated the soul, and after the node restarted on the same
 * data directory (the node's soul-store service rebuilds the index from LMDB).
 */
import { afterAll, afterEach, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, useSoulStore, type MentalProcess } from "../../../actors/soul/index.ts";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { recallIntegrator, RECALL_REGION } from "../../../examples/recall/soul.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { until } from "../../support/soul/helpers.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
let node: EnsoulNode | undefined;
afterEach(async () => {
  await node?.stop();
  node = undefined;
});

/** Stores what it hears and says what its integrator recalled (no model needed). */
const keeper: MentalProcess = async ({ workingMemory }) => {
  const { invokingPerception: p } = usePerceptions();
  useSoulStore().set(`fact:${p.id}`, p.content);
  const recalled = workingMemory.find((m) => m.region === RECALL_REGION)?.content ?? "nothing";
  useActions().speak(recalled);
  return workingMemory;
};
const blueprint = defineSoul({ name: "Keeper", persona: "keeps", initialProcess: keeper, processes: { keeper }, memoryIntegrator: recallIntegrator });

it("recalls across passivation and a node restart", async () => {
  const data = dirs.make();
  const config = parseClusterConfig({ cluster: "recall", souls: [{ id: "keeper", blueprint }], runtime: { heartbeatMs: 100, passivateAfterMs: 50 } });
  const start = () => startNode({ config, data, env: {}, store: { noSync: true }, log: () => undefined });
  const ask = async (text: string): Promise<string> => {
    const says = watchEnvelopes(node!.bus, clusterSubjects("recall").says("keeper"), "speech");
    try {
      const p = await perceive(node!.bus, "keeper", text);
      const reply = await says.next((e) => e.body.final && e.causation === p.id, 10_000, `the answer to ${text}`);
      return reply.body.text;
    } finally {
      says.stop();
    }
  };
  const passivated = () => node!.status().souls.find((s) => s.id === "keeper")?.status === "passivated";

  node = await start();
  expect(await ask("The lighthouse key hangs behind the red door")).toBe("nothing");
  await until(passivated, 5_000);
  expect(await ask("where is the lighthouse key?")).toContain("The lighthouse key hangs behind the red door");
  await node.stop();

  node = await start();
  expect(await ask("which door, for the key?")).toContain("The lighthouse key hangs behind the red door");
}, 30_000);
