/**
 * The Discord bridge's channel policy in threads. On Discord a thread is a channel of its own
 * (its messages carry the thread's id as their channel), with the channel it was started in as
 * its parent: `blockChannels` and `allowChannels` name that channel for its threads too. A
 * blocked channel's threads are not answered and an allowed channel's threads are, including
 * a thread the client never heard of before a message in it (looked up for its channel).
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { botMessages, replyTo, startDiscordNode, watchEvents } from "../../support/bridges/discordNode.ts";
import { startFakeDiscord, type FakeDiscord, type FakeGuildConfig } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const GENERAL = "300";
const THREAD = "310";
const ELSEWHERE = "320";
const ELSEWHERE_THREAD = "321";
const GUILDS: FakeGuildConfig[] = [
  {
    id: "200",
    name: "Ensoul Test Guild",
    owner_id: "400",
    channels: [
      { id: GENERAL, name: "general", type: 0 },
      { id: THREAD, name: "a-thread", type: 11, parent_id: GENERAL },
      { id: ELSEWHERE, name: "elsewhere", type: 0 },
      { id: ELSEWHERE_THREAD, name: "elsewhere-thread", type: 11, parent_id: ELSEWHERE },
    ],
  },
];

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
let fake: FakeDiscord | undefined;
let node: EnsoulNode | undefined;
afterEach(async () => {
  await node?.stop();
  await fake?.close();
  node = undefined;
  fake = undefined;
});

async function start(policy: Record<string, unknown>): Promise<{ f: FakeDiscord; node: EnsoulNode }> {
  const f = (fake = await startFakeDiscord({ heartbeatIntervalMs: 1000, guilds: GUILDS }));
  node = await startDiscordNode(f, dirs.make(), { options: { policy } });
  return { f, node };
}

type Ignored = { reason: string; channel: string; thread?: string; parentChannel?: string };

/** What the bridge's `bridge.ignored` event said of a message, once it has. */
async function ignored(f: FakeDiscord, n: EnsoulNode, send: () => { id: string }): Promise<Ignored> {
  const watch = await watchEvents(n);
  const sent = send();
  const event = await f.waitFor(() => watch.events.find((e) => e.type === "bridge.ignored" && (e.data as { messageId?: string }).messageId === sent.id));
  watch.stop();
  return event.data as Ignored;
}

const mention = (text: string) => `<@100> ${text}`;

describe("the Discord policy in threads", () => {
  it("blockChannels: a mention in a thread of a blocked channel is ignored, naming the channel; a thread elsewhere is answered", async () => {
    const { f, node } = await start({ blockChannels: [GENERAL] });
    const said = await ignored(f, node, () => f.messageCreate({ channel_id: THREAD, content: mention("in a blocked channel's thread") }));
    expect(said).toMatchObject({ reason: `thread ${THREAD} is in channel ${GENERAL}, which is blocked (policy.blockChannels)`, channel: THREAD, thread: THREAD, parentChannel: GENERAL });
    const open = f.messageCreate({ channel_id: ELSEWHERE_THREAD, content: mention("in an open thread") });
    expect((await replyTo(f, ELSEWHERE_THREAD, open.id)).content).toBe("echo: in an open thread");
    expect(botMessages(f, THREAD)).toEqual([]);
  });

  it("blockChannels naming the thread itself blocks it, and only it", async () => {
    const { f, node } = await start({ blockChannels: [THREAD] });
    expect((await ignored(f, node, () => f.messageCreate({ channel_id: THREAD, content: mention("here?") }))).reason).toBe(`channel ${THREAD} is blocked (policy.blockChannels)`);
    const top = f.messageCreate({ channel_id: GENERAL, content: mention("in the channel") });
    expect((await replyTo(f, GENERAL, top.id)).content).toBe("echo: in the channel");
  });

  it("allowChannels: a thread of an allowed channel is answered, and followed up; a thread of another channel is not", async () => {
    const { f, node } = await start({ allowChannels: [GENERAL] });
    const first = f.messageCreate({ channel_id: THREAD, content: mention("in an allowed channel's thread") });
    expect((await replyTo(f, THREAD, first.id)).content).toBe("echo: in an allowed channel's thread");
    const followUp = f.messageCreate({ channel_id: THREAD, author: "401", content: "and a follow-up" });
    expect((await replyTo(f, THREAD, followUp.id)).content).toBe("echo: and a follow-up");
    const { reason } = await ignored(f, node, () => f.messageCreate({ channel_id: ELSEWHERE_THREAD, content: mention("not allowed") }));
    expect(reason).toBe(`thread ${ELSEWHERE_THREAD} (in channel ${ELSEWHERE}) is not in policy.allowChannels`);
    expect(botMessages(f, ELSEWHERE_THREAD)).toEqual([]);
  });

  it("a thread the client never heard of is looked up for its channel before the policy decides", async () => {
    const { f, node } = await start({ allowChannels: [GENERAL], blockChannels: [ELSEWHERE] });
    const allowed = f.createThread({ parent_id: GENERAL, announce: false });
    const sent = f.messageCreate({ channel_id: allowed, content: mention("a thread nobody announced") });
    expect((await replyTo(f, allowed, sent.id)).content).toBe("echo: a thread nobody announced");
    expect(f.calls(`GET /channels/${allowed}`).length).toBeGreaterThanOrEqual(1);

    const blocked = f.createThread({ parent_id: ELSEWHERE, announce: false });
    const { reason } = await ignored(f, node, () => f.messageCreate({ channel_id: blocked, content: mention("and one under a blocked channel") }));
    expect(reason).toBe(`thread ${blocked} is in channel ${ELSEWHERE}, which is blocked (policy.blockChannels)`);
  });
});
