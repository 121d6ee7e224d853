/**
 * `ensoul chat --nats` under the permissions docs/SECURITY.md gives it: a real nats-server
 * running the config `ensoul nats-config` writes, a real node connected as a node user, and
 * the chat as a child process connected as a `chat` user (per-user inbox). The chat finds the
 * node by its heartbeats, publishes perceptions and reads the soul's says and events.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { inboxPrefixFor } from "../../../runtime/bus/permissions/index.ts";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { runEnsoul } from "../../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { freePort, startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";

const dirs = tempDirs("ensoul-chat-perms-");
afterAll(() => dirs.cleanup());

/** The passwords `ensoul nats-config` generated, from the notes it printed once on stderr. */
function generatedPasswords(stderr: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of stderr.matchAll(/# ensoul nats-config: (\S+): GENERATED password, shown only now \(it is also in the config\): (\S+)/g)) found.set(m[1], m[2]);
  return found;
}

describeWithNats("ensoul chat --nats under the generated permissions", () => {
  const cluster = uniqueCluster("perm");
  let server: NatsServerHandle;
  let node: EnsoulNode;
  let passwords: Map<string, string>;

  beforeAll(async () => {
    const dir = dirs.make();
    const port = await freePort();
    const confFile = join(dir, "nats.conf");
    const generated = await runEnsoul([
      "nats-config",
      "--cluster", cluster,
      "--user", "node-main:role=node:node=main",
      "--user", "ada-term:role=chat:souls=sam,kai",
      "--store-dir", join(dir, "js"),
      "--port", String(port),
      "--out", confFile,
    ]);
    expect(generated.stderr).not.toMatch(/^ensoul:/m);
    expect(generated.code).toBe(0);
    passwords = generatedPasswords(generated.stderr);
    server = await startNatsServer({ jetstream: false, config: readFileSync(confFile, "utf8"), port });
    const config = parseClusterConfig({ cluster, souls: [
        { id: "sam", blueprint: "samantha" },
        { id: "kai", blueprint: "samantha" },
      ], runtime: { heartbeatMs: 200, ackWaitMs: 2_000 } });
    node = await startNode({
      config,
      nats: { servers: server.url, user: "node-main", pass: passwords.get("node-main") ?? "", inboxPrefix: inboxPrefixFor("node-main") },
      nodeId: "main",
      data: dirs.make(),
      store: { noSync: true },
      log: () => undefined,
    });
  });

  afterAll(async () => {
    try {
      await node?.stop();
    } finally {
      await server?.dispose();
    }
  });

  it("a `chat` user finds the node by its heartbeats and gets an answer; --as names the person, ENSOUL_NATS_USER the NATS user", async () => {
    const result = await runEnsoul(["chat", "sam", "--cluster", cluster, "--as", "Ada"], {
      env: {
        ENSOUL_NATS_URL: server.url,
        ENSOUL_NATS_USER: "ada-term",
        ENSOUL_NATS_PASS: passwords.get("ada-term") ?? "",
        ENSOUL_NATS_INBOX_PREFIX: inboxPrefixFor("ada-term"),
      },
      stdin: "hello there\n",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Samantha \(sam\) on node main of cluster /);
    expect(result.stdout).toContain('Samantha: Hello, Ada! You said "hello there"');
  });

  it("--nats-user is the NATS user; the old --user still names the person, with a warning that does not block", async () => {
    const result = await runEnsoul(["chat", "kai", "--cluster", cluster, "--user", "Bea", "--nats-user", "ada-term", "--inbox-prefix", inboxPrefixFor("ada-term")], {
      env: { ENSOUL_NATS_URL: server.url, ENSOUL_NATS_PASS: passwords.get("ada-term") ?? "" },
      stdin: "good morning\n",
    });
    expect(result.stderr).toBe("ensoul: warning: `ensoul chat --user` is deprecated: it names you to the soul, use --as <name> (the NATS user is --nats-user or ENSOUL_NATS_USER)\n");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Samantha: Hello, Bea! You said "good morning"');
  });
});
