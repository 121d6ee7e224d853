/**
 * A bridge that cannot start stops the node's start with its error, as a skill gate without
 * its grant does, rather than leave a node that says `ready` with nobody answering where the
 * config says the soul is. A bridge marked `optional: true` in the config may fail: the node
 * starts and shows it `failed` with the reason. A start that fails leaves nothing running:
 * the bridges started before it are stopped (their port is free), the data directory too.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { parseClusterConfig, startNode } from "../../../runtime/node/index.ts";
import { echoSoul } from "../../support/cluster/blueprints.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const TOKEN = "bridge-start-token-5d1e";

function config(bridges: Record<string, unknown>[]) {
  return parseClusterConfig({
    cluster: "starts",
    souls: [
      { id: "echo", blueprint: echoSoul },
      { id: "other", blueprint: echoSoul },
    ],
    bridges,
    runtime: { heartbeatMs: 100, passivateAfterMs: 0 },
  });
}

/** A port something else listens on. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

describe("a bridge that cannot start", () => {
  it("stops the node's start with its error (ENSOUL_HTTP_TOKEN missing), and the data directory is free again", async () => {
    const data = dirs.make();
    const lines: string[] = [];
    const starting = startNode({ config: config([{ type: "http", soul: "echo", options: { port: 0 } }]), data, store: { noSync: true }, env: {}, log: (l) => lines.push(l) });
    await expect(starting).rejects.toThrow(/^bridge http-echo \(http, soul echo\) cannot start: http bridge http-echo: set ENSOUL_HTTP_TOKEN .*; mark it optional: true in the config to start without it$/);
    const again = await startNode({ config: config([]), data, store: { noSync: true }, log: () => undefined });
    await again.stop();
  });

  it("a bridge whose port is taken stops the start, and the bridge started before it is stopped (its port free)", async () => {
    const { port, server } = await takenPort();
    const free = await takenPort();
    await new Promise<void>((resolve) => free.server.close(() => resolve()));
    try {
      const bridges = [
        { type: "http", soul: "other", options: { port: free.port } },
        { type: "http", soul: "echo", options: { port } },
      ];
      await expect(startNode({ config: config(bridges), data: dirs.make(), store: { noSync: true }, env: { ENSOUL_HTTP_TOKEN: TOKEN }, log: () => undefined })).rejects.toThrow(
        /^bridge http-echo \(http, soul echo\) cannot start: .*EADDRINUSE/,
      );
      await expect(fetch(`http://127.0.0.1:${free.port}/healthz`)).rejects.toThrow();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("marked optional: true, it may fail: the node starts, shows it failed with the reason, and serves the rest", async () => {
    const bridges = [
      { type: "http", soul: "echo", optional: true, options: { port: 0 } },
      { type: "discord", soul: "other", optional: true },
    ];
    const lines: string[] = [];
    const node = await startNode({ config: config(bridges), data: dirs.make(), store: { noSync: true }, env: {}, log: (l) => lines.push(l) });
    try {
      expect(node.status().bridges).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: "http-echo", state: "failed", lastError: expect.stringMatching(/ENSOUL_HTTP_TOKEN/) }),
          expect.objectContaining({ name: "discord-other", state: "failed", lastError: expect.stringMatching(/DISCORD_TOKEN/) }),
        ]),
      );
      expect(lines).toContainEqual(expect.stringMatching(/^optional bridge http-echo not started: .*ENSOUL_HTTP_TOKEN/));
      expect(node.status().state).toBe("running");
    } finally {
      await node.stop();
    }
  });

  it("optional must be true or false", () => {
    expect(() => config([{ type: "http", soul: "echo", optional: "yes" }])).toThrow(/bridges\[0\]\.optional: (?!unknown field)/);
  });
});
