/**
 * A streamed Discord reply cut by a SIGKILL is completed after the restart, at each point of
 * the stream (test/support/bridges/streamCrash.ts): the channel ends with one reply holding the
 * whole committed answer, not its first piece.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { KILL_POINTS, streamCrashRig } from "../../support/bridges/streamCrash.ts";
import { startFakeDiscord, type FakeDiscord } from "../../support/fakes/discord/index.ts";

let discord: FakeDiscord;
beforeAll(async () => void (discord = await startFakeDiscord({ heartbeatIntervalMs: 1000 })));
afterAll(() => discord.close());

const rig = streamCrashRig({
  bridge: async () => "{ type: discord, soul: sam }",
  env: () => ({ DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl }),
  send: async (text) => discord.messageCreate({ content: `<@${discord.botUser.id}> ${text}` }).id,
  replies: (to) =>
    discord
      .messages()
      .filter((m) => m.author["id"] === discord.botUser.id && !m.deleted && (m.message_reference as { message_id?: string } | undefined)?.message_id === to)
      .map((m) => m.content),
});

describe("a streamed Discord reply cut by a SIGKILL, after the restart", () => {
  it.each(KILL_POINTS)("killed at $name: one reply, the whole answer", (kill) => rig.crash(kill), 90_000);
});
