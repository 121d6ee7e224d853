/**
 * A streamed Discord reply cut by a SIGKILL is completed after the restart, at each point of
 * the stream (test/support/bridges/streamCrash.ts): the channel ends with one reply holding the
 * whole committed answer, not its first piece.
 */
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { crashMidStream, KILL_POINTS, type CrashPlatform } from "../../support/bridges/streamCrash.ts";
import type { NodeProcess } from "../../support/cluster/cliProcess.ts";
import type { EnsoulNode } from "../../../runtime/node/index.ts";
import { startFakeDiscord, type FakeDiscord } from "../../support/fakes/discord/index.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { startAnthropicServer, type ScriptedServer } from "../../support/wire/anthropicServer.ts";

const dirs = tempDirs("ensoul-discord-stream-crash-");
let model: ScriptedServer;
let discord: FakeDiscord;
const nodes: NodeProcess[] = [];
const restarted: EnsoulNode[] = [];

beforeAll(async () => {
  model = await startAnthropicServer();
  discord = await startFakeDiscord({ heartbeatIntervalMs: 1000 });
});
afterAll(async () => {
  await model.close();
  await discord.close();
  dirs.cleanup();
});
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.kill("SIGKILL");
  for (const n of restarted.splice(0)) await n.stop();
});

const platform: CrashPlatform = {
  bridge: async () => "{ type: discord, soul: sam }",
  env: () => ({ DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl }),
  send: async (text) => discord.messageCreate({ content: `<@${discord.botUser.id}> ${text}` }).id,
  replies: (to) =>
    discord
      .messages()
      .filter((m) => m.author["id"] === discord.botUser.id && !m.deleted && (m.message_reference as { message_id?: string } | undefined)?.message_id === to)
      .map((m) => m.content),
};

describe("a streamed Discord reply cut by a SIGKILL, after the restart", () => {
  it.each(KILL_POINTS)("killed at $name: one reply, the whole answer", async (kill) => {
    await crashMidStream({ dir: dirs.make(), model, platform, kill, nodes, restarted });
  }, 90_000);
});
