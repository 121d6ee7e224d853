/**
 * A node's log: every line about a soul names the node and the soul, and a turn's lines carry
 * its trace (`<soul>:<turn>`, what its speech and events carry), so one turn's lines can be
 * found together; a failed turn is a warning, a committed one a `debug` line; no credential
 * a failure quotes reaches the log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { createLogger } from "../../../runtime/log/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const KEY = "gsk_abcdefghijklmnopqrstuvwxyz0123456789";

const moody: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  if (content === "fail") throw new Error(`the provider refused key ${KEY}`);
  useActions().speak(`fine: ${content}`);
  return workingMemory;
};
const moodySoul = defineSoul({ name: "Moody", persona: "Sometimes fails.", initialProcess: moody, processes: { moody } });

describe("a node's log", () => {
  const dirs = tempDirs();
  const records: Record<string, unknown>[] = [];
  let node: EnsoulNode;

  beforeAll(async () => {
    const logger = createLogger({ level: "debug", format: "json", target: { write: (l) => void records.push(JSON.parse(l) as Record<string, unknown>) } });
    node = await startNode({ config: parseClusterConfig({ cluster: "logged", souls: [{ id: "moody", blueprint: moodySoul }] }), data: dirs.make(), store: { noSync: true }, logger });
  });
  afterAll(async () => {
    await node?.stop();
    dirs.cleanup();
  });

  it("gives each line of a turn the node, the soul and the turn's trace", async () => {
    const events = watchEnvelopes(node.bus, "ensoul.logged.soul.moody.events", "event");
    await perceive(node.bus, "moody", "hello");
    const failing = await perceive(node.bus, "moody", "fail");
    const error = await events.next((e) => e.body.type === "soul.error" && e.causation === failing.id, 10_000, "the failed turn");
    await node.idle();
    events.stop();

    const done = records.find((r) => r.level === "debug" && r.msg === "soul moody: turn 1 done in moody");
    expect(done).toMatchObject({ node: "local", soul: "moody", trace: "moody:1", process: "moody" });
    expect(typeof done?.durationMs).toBe("number");

    const failed = records.find((r) => r.level === "warn" && r.soul === "moody");
    // The reason, redacted, and where the soul's code threw it (`moody` above).
    expect(failed).toMatchObject({ node: "local", trace: "moody:2", perception: failing.id, msg: expect.stringMatching(/^soul moody: process failed in moody: the provider refused key \[redacted\] at test\/integration\/operations\/nodeLog\.test\.ts:\d+:\d+$/) });
    // The event carries the same trace as the line.
    expect(error.trace).toBe("moody:2");
    expect(JSON.stringify(records)).not.toContain(KEY);
  });
});
