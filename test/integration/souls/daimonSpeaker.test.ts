/**
 * A daimon that speaks is a third voice in the room, not the person the soul is talking to.
 * Claudius on the offline model (no keys), Kothar in speak mode after every exchange, both on
 * a one-process node: what Kothar says must never come back to the person as theirs
 * ("Earlier you told me ..."), nor reach the soul under the person's platform id.
 */
import { afterAll, afterEach, expect, it } from "vitest";
import { clusterSubjects, type Envelope } from "../../../runtime/bus/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
let node: EnsoulNode | undefined;
afterEach(async () => {
  await node?.stop();
  node = undefined;
});

it("keeps a speaking daimon's words attributed to the daimon, never to the person", async () => {
  const config = parseClusterConfig({
    cluster: "speaker",
    souls: [{ id: "claudius", blueprint: "claudius" }],
    daimons: [{ soul: "claudius", builtin: "kothar", mode: "speak", everyN: 1 }],
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
  node = await startNode({ config, data: dirs.make(), env: {}, store: { noSync: true }, log: () => undefined });
  const bus = node.bus;
  const s = clusterSubjects("speaker");
  const says = watchEnvelopes(bus, s.says("claudius"), "speech");
  const perceived = watchEnvelopes(bus, s.perceive("claudius"), "perception");
  const answerTo = (p: { id: string }) => says.next((e) => e.from === "claudius" && e.body.final && e.causation === p.id, 20_000, `Claudius's answer to ${p.id}`);

  const meta = { channel: "C1", thread: "t1", userId: "U7" };
  const first = await perceive(bus, "claudius", "My iron chatters.", { name: "Tom", body: { meta } });
  await answerTo(first);
  // Kothar speaks after the exchange; Claudius hears him and answers him.
  const kothar = await says.next((e) => e.from === "Kothar" && e.body.final, 20_000, "Kothar's speech");
  const heard = (await perceived.next((e) => e.from === "Kothar", 20_000, "Kothar's perception")) as Envelope<"perception">;
  expect(heard.body.name).toBe("Kothar");
  // Still in Tom's thread, but not under Tom's platform id.
  expect(heard.body.meta).toEqual({ channel: "C1", thread: "t1" });
  const toKothar = await answerTo(heard);
  // Tom said that, not Kothar.
  expect(toKothar.body.text).not.toContain('Earlier you told me "My iron chatters."');

  const second = await perceive(bus, "claudius", "ok", { name: "Tom", body: { meta } });
  const toTom = await answerTo(second);
  expect(toTom.body.text).not.toContain(kothar.body.text);
  // What Tom said earlier is still Tom's.
  expect(toTom.body.text).toContain('Earlier you told me "My iron chatters."');
  says.stop();
  perceived.stop();
}, 60_000);
