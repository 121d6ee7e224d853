/**
 * The builtin Claudius brings his own tools, as a soul folder's `tools/` would: any config
 * that runs `blueprint: claudius` (the demo's examples/demo.yaml) gives him the clock and the
 * notebook, the notebook in the node's LMDB. In a node started from the demo config his
 * Research action consults them, through the demo's gates (the bouncer lets them through by
 * its allowlist), and reports each call as an event.
 */
import { afterAll, expect, it } from "vitest";
import { clusterSubjects } from "../../../runtime/bus/index.ts";
import { DEMO_CONFIG, DEMO_SOUL } from "../../../runtime/cli/demoCommand.ts";
import { blueprintOf, loadClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { toolsOfBlueprint } from "../../../runtime/node/soulFolderTools.ts";
import { ModelRegistry } from "../../../runtime/providers/index.ts";
import { openStore } from "../../../runtime/store/index.ts";
import { createClaudius, NOTES_NAMESPACE, OPEN_PROBLEM_MARKER } from "../../../souls/claudius/index.ts";
import { watchEnvelopes } from "../../support/cluster/busWatch.ts";
import { perceive } from "../../support/cluster/clusterKit.ts";
import { pipelineAnswer } from "../../support/souls/pipelineAnswer.ts";
import { queueModel, requestText } from "../../support/souls/queueModel.ts";
import { choose } from "../../support/souls/wireScript.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

it("the demo config's Claudius has his clock and notes; a Claudius made elsewhere has none", async () => {
  const { config } = await loadClusterConfig(DEMO_CONFIG);
  const entry = config.souls.find((s) => s.id === DEMO_SOUL)!;
  const store = openStore({ path: dirs.make(), noSync: true });
  try {
    expect(toolsOfBlueprint(blueprintOf(entry), { store }).map((t) => t.name)).toEqual(["clock", "notes"]);
    expect(toolsOfBlueprint(createClaudius(), { store })).toEqual([]);
  } finally {
    await store.close();
  }
});

it("in a node from the demo config, his Research consults the clock and his notes through the gates", { timeout: 20_000 }, async () => {
  const loaded = await loadClusterConfig(DEMO_CONFIG);
  // The demo's souls and gates as they are; the model a queue, and no Kothar to take its answers.
  loaded.config.providers = { default: "queue:m" };
  loaded.config.daimons = [];
  const model = queueModel();
  const data = dirs.make();
  const node = await startNode({ config: loaded, data, env: {}, registry: new ModelRegistry().register("queue", model), store: { noSync: true }, log: () => undefined });
  try {
    // A note kept earlier, in the node's store (the notebook's home).
    await node.store.kv(DEMO_SOUL, NOTES_NAMESPACE).put(["earlier"], { text: "Tom's irons are pre-war Stanley blades.", ts: 1 });
    const subjects = clusterSubjects(loaded.config.cluster);
    const says = watchEnvelopes(node.bus, subjects.says(DEMO_SOUL), "speech");
    const events = watchEnvelopes(node.bus, subjects.events(DEMO_SOUL), "event");

    model.answer(pipelineAnswer({ monologue: "Hm.", dialogue: "Claudius.", userModelCheck: false }));
    const hi = await perceive(node.bus, DEMO_SOUL, "Hi.", { name: "Tom" });
    await says.next((e) => e.body.final && e.causation === hi.id, 10_000, "the greeting");

    model.answer(
      pipelineAnswer({ monologue: `Irons. ${OPEN_PROBLEM_MARKER}`, dialogue: "Let me look at my notes.", userModelCheck: false }),
      choose(["Research"]),
      choose(["Respond"]),
      'Claudius explained: "Flatten the backs first."',
    );
    const ask = await perceive(node.bus, DEMO_SOUL, "How should I sharpen my old Stanley irons?", { name: "Tom" });
    await says.next((e) => e.body.final && e.causation === ask.id && e.body.text === "Flatten the backs first.", 10_000, "the answer after Research");

    const prompt = requestText(model.requests.at(-1)!);
    expect(prompt).toContain("pre-war Stanley blades");
    expect(prompt).toMatch(/it is \w+day, \d{4}-/);
    const results = events.seen.flatMap((e) => {
      const body = e.body as { type: string; data: { tool?: string; outcome?: string } };
      return body.type === "soul.tool.result" ? [`${body.data.tool} ${body.data.outcome}`] : [];
    });
    expect(results).toEqual(["clock ok", "notes ok"]);
    expect(model.left()).toBe(0);
    says.stop();
    events.stop();
  } finally {
    await node.stop();
  }
});
