import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { DAIMONIC_WHISPER_KEY, formatDaimonicIntuition, readDaimonicWhisper } from "../../../actors/daimon/index.ts";
import { connectNatsBus, type Bus } from "../../../runtime/bus/index.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { collect, until } from "../../unit/daimon/daimonTestKit.ts";
import { recalledIntuition, startScenario, type Scenario } from "./scenario.ts";

const WHISPER = { content: "They need assurance, not answers.", source: "Kothar" };

describeWithNats("a daimon beside a real soul over a real nats-server", () => {
  let server: NatsServerHandle;
  let soulBus: Bus | undefined;
  let daimonBus: Bus | undefined;
  let scenario: Scenario | undefined;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true });
  });
  afterAll(async () => {
    await server?.dispose();
  });
  afterEach(async () => {
    await scenario?.close();
    await daimonBus?.drain();
    await soulBus?.drain();
    scenario = undefined;
  });

  it("whispers across two connections; the soul stores it in LMDB and recalls it for exactly one successful turn", async () => {
    const cluster = `daimon_nats_${process.pid}`;
    // Two connections, as the soul's node and the daimon would be two processes.
    soulBus = await connectNatsBus({ servers: server.url, cluster, name: "soul-node" });
    daimonBus = await connectNatsBus({ servers: server.url, cluster, name: "daimon" });
    const s = (scenario = await startScenario(soulBus, daimonBus));
    const whispers = collect(soulBus, `ensoul.${cluster}.soul.ann.whisper`).envelopes;

    await s.say("Will it really be fine?");
    await until(() => readDaimonicWhisper(s.storedSoulMemory() ?? {}) !== undefined, 10_000, "the whisper in LMDB");
    expect(s.storedSoulMemory()?.[DAIMONIC_WHISPER_KEY]).toEqual(WHISPER);
    expect(whispers).toHaveLength(1);
    expect(whispers[0]).toMatchObject({ kind: "whisper", from: "Kothar", to: "ann", body: WHISPER });
    expect(s.wiring.whispers).toBe(1);
    s.daimon.setMode("off");

    await s.say("And now?");
    expect(recalledIntuition(s.soulCalls[1])).toBe(formatDaimonicIntuition("Ann", WHISPER));
    expect(s.storedSoulMemory()?.[DAIMONIC_WHISPER_KEY]).toBeNull();

    await s.say("And then?");
    expect(recalledIntuition(s.soulCalls[2])).toBeUndefined();
    expect(s.daimonCalls).toHaveLength(1);
  });
});
