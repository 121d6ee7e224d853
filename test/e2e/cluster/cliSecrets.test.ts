/**
 * Secrets on the command line of the real `ensoul` binary: a password or token in a NATS URL
 * is never printed (errors, banners), and a secret given as a flag (--pass, --token, a URL
 * with credentials) still works but warns, by flag name only, because `ps` and the shell's
 * history show it. The environment and a NATS `.creds` file (`--creds`) are the quiet ways.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseClusterConfig, startNode, type EnsoulNode } from "../../../runtime/node/index.ts";
import { runEnsoul, spawnNode } from "../../support/cluster/cliProcess.ts";
import { uniqueCluster } from "../../support/cluster/clusterKit.ts";
import { describeWithNats } from "../../support/nats/describeWithNats.ts";
import { operatorMode } from "../../support/nats/natsJwt.ts";
import { startNatsServer, type NatsServerHandle } from "../../support/nats/natsServer.ts";
import { tempDirs } from "../../support/tempDirs.ts";
import { freePort } from "../../support/ports.ts";

const dirs = tempDirs("ensoul-cli-secrets-");
afterAll(() => dirs.cleanup());

const EXPOSED = "on the command line, visible to anyone who can run `ps` and kept in your shell history";
const PASS_WARNING = (flag: string) => `ensoul: warning: ${flag} puts the NATS password ${EXPOSED}: set ENSOUL_NATS_PASS instead, or use --creds <file>\n`;
const DEPRECATED = "ensoul: warning: --user and --pass are deprecated names for the NATS user and password: use --nats-user and --nats-pass (or ENSOUL_NATS_USER and ENSOUL_NATS_PASS)\n";
const TOKEN_WARNING = `ensoul: warning: --token puts the NATS token ${EXPOSED}: set ENSOUL_NATS_TOKEN instead, or use --creds <file>\n`;
const URL_WARNING = `ensoul: warning: --nats puts the credentials in its URL ${EXPOSED}: set ENSOUL_NATS_URL instead, or use --creds <file>\n`;

describe("credentials in a NATS URL are never printed", () => {
  it("a password in the URL: taken out of the URL, never in the connection error of any command, and the flag warns", async () => {
    const port = await freePort();
    for (const args of [["status"], ["chat", "sam"], ["whisper", "sam", "hi"], ["up", "examples/two-nodes.yaml", "--node", "a", "--data", dirs.make()]]) {
      const result = await runEnsoul([...args, "--nats", `nats://alice:s3cret-pw@127.0.0.1:${port}`]);
      expect(result.stdout + result.stderr, args[0]).not.toContain("s3cret-pw");
      expect(result.stderr, args[0]).toBe(`${URL_WARNING}ensoul: cannot reach NATS at nats://127.0.0.1:${port} (connection refused)\n`);
      expect(result.code, args[0]).toBe(1);
    }
  });

  it("a token in the URL (NATS reads a lone user part as one), from the environment: not shown, no warning", async () => {
    const port = await freePort();
    const result = await runEnsoul(["status"], { env: { ENSOUL_NATS_URL: `nats://t0ken-s3cret@127.0.0.1:${port}` } });
    expect(result.stderr).toBe(`ensoul: cannot reach NATS at nats://127.0.0.1:${port} (connection refused)\n`);
  });

  it("--token works as before but warns, without the token", async () => {
    const port = await freePort();
    const result = await runEnsoul(["status", "--nats", `nats://127.0.0.1:${port}`, "--token", "t0ken-s3cret"]);
    expect(result.stderr).toBe(`${TOKEN_WARNING}ensoul: cannot reach NATS at nats://127.0.0.1:${port} (connection refused)\n`);
  });

  it("--creds: a file that is not a NATS credentials file is one clear line", async () => {
    const file = join(dirs.make(), "not.creds");
    writeFileSync(file, "password=hunter2hunter2\n");
    const result = await runEnsoul(["status", "--nats", "nats://127.0.0.1:1", "--creds", file]);
    expect(result.stderr).toBe(`ensoul: ${file} is not a NATS credentials file (it should hold a NATS USER JWT and a USER NKEY SEED block)\n`);
    expect(result.code).toBe(2);
    const both = await runEnsoul(["status", "--nats", "nats://127.0.0.1:1", "--creds", file], { env: { ENSOUL_NATS_TOKEN: "x" } });
    expect(both.stderr).toBe("ensoul: give one way to authenticate to NATS: --nats-user/--nats-pass, --token, --creds or --nkey-seed-file\n");
  });
});

describeWithNats("a password from the environment or a flag, against a real server", () => {
  const cluster = uniqueCluster("pw");
  const password = "Correct-horse-battery-staple-42";
  let server: NatsServerHandle;
  let node: EnsoulNode;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true, config: `authorization { users = [ { user: alice, password: "${password}" } ] }\n` });
    const config = parseClusterConfig({ cluster, souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 200 } });
    node = await startNode({ config, nats: { servers: server.url, user: "alice", pass: password }, nodeId: "main", data: dirs.make(), store: { noSync: true }, log: () => undefined });
  });
  afterAll(async () => {
    try {
      await node?.stop();
    } finally {
      await server?.dispose();
    }
  });

  it("ENSOUL_NATS_PASS: quiet; --nats-pass: the same connection, with a warning that does not show the password", async () => {
    const fromEnv = await runEnsoul(["status", "--nats", server.url, "--cluster", cluster, "--nats-user", "alice"], { env: { ENSOUL_NATS_PASS: password } });
    expect(fromEnv.stderr).toBe("");
    expect(fromEnv.stdout).toMatch(/^node main /m);
    const fromFlag = await runEnsoul(["status", "--nats", server.url, "--cluster", cluster, "--nats-user", "alice", "--nats-pass", password]);
    expect(fromFlag.stderr).toBe(PASS_WARNING("--nats-pass"));
    expect(fromFlag.stdout).toMatch(/^node main /m);
  });

  it("the old --user and --pass still connect, with one deprecation note naming the flags, never the password", async () => {
    const old = await runEnsoul(["status", "--nats", server.url, "--cluster", cluster, "--user", "alice", "--pass", password]);
    expect(old.stderr).toBe(`${DEPRECATED}${PASS_WARNING("--pass")}`);
    expect(old.stdout).toMatch(/^node main /m);
    expect(old.stdout + old.stderr).not.toContain(password);
  });

  it("a node started with the user and password in ENSOUL_NATS_URL connects with them, and shows the URL without them", async () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "solo.yaml"), `cluster: ${cluster}-up\nsouls:\n  - { id: kai, blueprint: samantha }\n`);
    const up = spawnNode([join(dir, "solo.yaml"), "--data", join(dir, "data")], { ENSOUL_NATS_URL: server.url.replace("//", `//alice:${password}@`), ENSOUL_NODE: "solo" });
    await up.waitFor(/ensoul up: ready/);
    expect(await up.kill("SIGTERM")).toBe(0);
    expect(up.output()).toContain(`ensoul up: node solo of cluster ${cluster}-up on nats://127.0.0.1:${server.port};`);
    expect(up.output()).not.toContain(password);
  });
});

describeWithNats("--creds: a NATS credentials file, against a server in operator mode", () => {
  const cluster = uniqueCluster("creds");
  const operator = operatorMode();
  let server: NatsServerHandle;
  let node: EnsoulNode;
  let credsFile: string;

  beforeAll(async () => {
    server = await startNatsServer({ jetstream: true, config: operator.config });
    credsFile = join(dirs.make(), "cli.creds");
    writeFileSync(credsFile, operator.creds("cli"), { mode: 0o600 });
    const config = parseClusterConfig({ cluster, souls: [{ id: "sam", blueprint: "samantha" }], runtime: { heartbeatMs: 200 } });
    node = await startNode({ config, nats: { servers: server.url, creds: operator.creds("node") }, nodeId: "main", data: dirs.make(), store: { noSync: true }, log: () => undefined });
  });
  afterAll(async () => {
    try {
      await node?.stop();
    } finally {
      await server?.dispose();
    }
  });

  it("--creds <file> and ENSOUL_NATS_CREDS connect quietly; without credentials the server refuses", async () => {
    const flag = await runEnsoul(["status", "--nats", server.url, "--cluster", cluster, "--creds", credsFile]);
    expect(flag.stderr).toBe("");
    expect(flag.stdout).toMatch(/^node main /m);
    const chat = await runEnsoul(["chat", "sam", "--as", "ada", "--cluster", cluster], { env: { ENSOUL_NATS_URL: server.url, ENSOUL_NATS_CREDS: credsFile }, stdin: "hello\n" });
    expect(chat.stderr).toBe("");
    expect(chat.stdout).toContain('Samantha: Hello, ada! You said "hello"');
    const none = await runEnsoul(["status", "--nats", server.url, "--cluster", cluster]);
    expect(none.stderr).toMatch(/^ensoul: cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+ \(authorization failed: /);
  });
});
