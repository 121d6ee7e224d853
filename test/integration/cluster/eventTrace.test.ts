/**
 * Everything one turn produces carries the turn's trace (PROTOCOL.md §5: `<soulId>:<turn>`):
 * its speech, and its `soul.turn` and `soul.transition` events, so a debugger can group them
 * without knowing which perception caused what.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { clusterSubjects, type Bus } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

/** `go` moves on to `second` with executeNow (a transition inside the turn); `second` speaks and goes back (one at its end). */
const second: MentalProcess = async ({ workingMemory }) => {
  useActions().speak(`second: ${usePerceptions().invokingPerception.content}`);
  return [workingMemory, first];
};
const first: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  if (content === "go") return [workingMemory, second, { executeNow: true }];
  useActions().speak(`first: ${content}`);
  return workingMemory;
};
const relay = defineSoul({ name: "Relay", persona: "Hands things on.", initialProcess: first, processes: { first: { process: first, next: ["second"] }, second: { process: second, next: ["first"] } } });

describe("the turn's trace on its events", () => {
  const dirs = tempDirs();
  let node: EnsoulNode;
  let bus: Bus;
  const s = clusterSubjects("traced");

  beforeAll(async () => {
    const config = parseClusterConfig({ cluster: "traced", souls: [{ id: "relay", blueprint: relay }], runtime: { heartbeatMs: 100 } });
    node = await startNode({ config, data: dirs.make(), store: { noSync: true }, log: () => undefined });
    bus = node.bus;
  });
  afterAll(async () => {
    await node.stop();
    dirs.cleanup();
  });

  it("gives soul.turn and soul.transition the trace its speech has", async () => {
    const events = watchEnvelopes(bus, s.events("relay"), "event");
    const says = watchEnvelopes(bus, s.says("relay"), "speech");
    await perceive(bus, "relay", "hello");
    const p = await perceive(bus, "relay", "go");
    const turn = await events.next((e) => e.body.type === "soul.turn" && e.causation === p.id, 10_000, "the second turn's event");
    const speech = await says.next((e) => e.body.final && e.causation === p.id, 10_000, "the second turn's speech");
    expect(speech.trace).toBe("relay:2");
    expect(turn.trace).toBe("relay:2");
    const transitions = events.seen.filter((e) => e.body.type === "soul.transition" && e.causation === p.id);
    expect(transitions.map((e) => [(e.body.data as { from: string; to: string }).from, (e.body.data as { to: string }).to, e.trace])).toEqual([
      ["first", "second", "relay:2"],
      ["second", "first", "relay:2"],
    ]);
    const firstTurn = events.seen.find((e) => e.body.type === "soul.turn" && e.causation !== p.id);
    expect(firstTurn?.trace).toBe("relay:1");
  });
});
