import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUser } from "@nats-io/nkeys";
import { Command } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CliError } from "../../../runtime/cli/CliError.ts";
import { generatePassword, natsConfigCommand, parseUserSpec, type NatsConfigCommandOptions } from "../../../runtime/cli/natsConfigCommand.ts";
import { registerNatsConfigCommand } from "../../../runtime/cli/natsConfigCommandLine.ts";

function run(opts: Partial<NatsConfigCommandOptions> & Pick<NatsConfigCommandOptions, "user">) {
  let out = "";
  let err = "";
  let n = 0;
  const result = natsConfigCommand({
    cluster: "demo",
    env: {},
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    generatePassword: () => `Generated-password-${++n}`,
    ...opts,
  });
  return result.then((r) => ({ ...r, out, err }));
}

describe("ensoul nats-config", () => {
  it("parses --user specs", () => {
    expect(parseUserSpec("node-a:role=node:node=n1")).toEqual({ user: "node-a", role: "node", nodeId: "n1" });
    expect(parseUserSpec("b:role=bridge:souls=sam,kai:consumers=b-sam:cluster=alpha")).toEqual({ user: "b", role: "bridge", souls: ["sam", "kai"], consumers: ["b-sam"], cluster: "alpha" });
    expect(parseUserSpec("k:role=daimon:speak:souls=sam")).toEqual({ user: "k", role: "daimon", speak: true, souls: ["sam"] });
    expect(parseUserSpec("n:role=node:tools=clock,notes")).toEqual({ user: "n", role: "node", tools: ["clock", "notes"] });
    expect(parseUserSpec("ada:role=chat:souls=sam:shared=read")).toEqual({ user: "ada", role: "chat", souls: ["sam"], sharedContext: "read" });
    expect(() => parseUserSpec("ada:role=chat:shared=all")).toThrow(/shared= takes read or write/);
    expect(() => parseUserSpec("x")).toThrow(/needs role=/);
    expect(() => parseUserSpec("x:role=admin")).toThrow(/must be one of node, bridge, daimon, gate/);
    expect(() => parseUserSpec("x:role=node:colour=red")).toThrow(/unknown or incomplete field "colour=red"/);
    expect(() => parseUserSpec("x:role=node:role=gate")).toThrow(/given twice/);
    expect(() => parseUserSpec(":role=node")).toThrow(CliError);
  });

  it("refers to a password from the environment and never prints it", async () => {
    const secret = "Abcdefghijkl-secret-value";
    const r = await run({ user: ["node-a:role=node", "bridge1:role=bridge"], env: { ENSOUL_NATS_PASSWORD_NODE_A: secret, ENSOUL_NATS_PASSWORD_BRIDGE1: `${secret}-2` } });
    expect(r.out).toContain("password: $ENSOUL_NATS_PASSWORD_NODE_A");
    expect(r.out).toContain("password: $ENSOUL_NATS_PASSWORD_BRIDGE1");
    expect(r.out + r.err).not.toContain(secret);
    expect(r.err).toContain("node-a: password from $ENSOUL_NATS_PASSWORD_NODE_A");
    expect(r.users).toEqual([
      { user: "node-a", role: "node", credential: "env", envVar: "ENSOUL_NATS_PASSWORD_NODE_A" },
      { user: "bridge1", role: "bridge", credential: "env", envVar: "ENSOUL_NATS_PASSWORD_BRIDGE1" },
    ]);
  });

  it("generates a missing password, says so, and shows it once on stderr", async () => {
    const r = await run({ user: ["bridge1:role=bridge"] });
    expect(r.out).toContain('password: "Generated-password-1"');
    expect(r.err).toContain("bridge1: GENERATED password, shown only now (it is also in the config): Generated-password-1");
    expect(r.err).toContain("set ENSOUL_NATS_PASSWORD_BRIDGE1");
    expect(r.users[0].credential).toBe("generated");
  });

  it("takes nkey users without any password", async () => {
    const nkey = createUser().getPublicKey();
    const r = await run({ user: [`gate1:role=gate:skills=tone:nkey=${nkey}`] });
    expect(r.out).toContain(`nkey: "${nkey}"`);
    expect(r.out).not.toContain("password");
    expect(r.out).toContain('"ensoul.demo.gate.tone.verify tone"');
  });

  it("rejects an unusable env password without showing it", async () => {
    for (const bad of ["12345678901234", "short", "has space in it", "true", "a#commentedout"]) {
      const err = await run({ user: ["u:role=node"], env: { ENSOUL_NATS_PASSWORD_U: bad } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CliError);
      expect((err as Error).message).toMatch(/ENSOUL_NATS_PASSWORD_U is set but unusable/);
      expect((err as Error).message).not.toContain(bad);
    }
  });

  it("turns bad input into one clear CliError", async () => {
    await expect(run({ user: ["u.v:role=node"] })).rejects.toThrow(CliError);
    await expect(run({ user: ["u:role=node:souls=a.b"] })).rejects.toThrow(/invalid soulId "a.b"/);
    await expect(run({ user: [] })).rejects.toThrow(/at least one --user/);
    await expect(run({ cluster: [], user: ["u:role=node"] })).rejects.toThrow(/--cluster/);
    await expect(run({ cluster: ["a", "b"], user: ["u:role=node"] })).rejects.toThrow(/needs a cluster/);
    await expect(run({ user: ["u:role=node"], port: "80x" })).rejects.toThrow(/--port/);
    await expect(run({ user: ["u:role=node"], isolation: "none" })).rejects.toThrow(/--isolation/);
  });

  it("writes the config to --out with mode 0600, even over an existing readable file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ensoul-nats-config-"));
    try {
      const file = join(dir, "nats.conf");
      writeFileSync(file, "old", { mode: 0o644 });
      const r = await run({ user: ["node-a:role=node"], out: file, cluster: "alpha", port: "4333", storeDir: "/var/lib/nats", sharedInbox: true });
      expect(r.out).toBe("");
      expect(readFileSync(file, "utf8")).toBe(r.config);
      expect(r.config).toContain("port: 4333");
      expect(r.config).toContain('"_INBOX.>"');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(r.err).toContain(`config written to ${file} (mode 0600)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("generated passwords are long, random and usable as env values", () => {
    const a = generatePassword();
    expect(a).toMatch(/^[A-Za-z][A-Za-z0-9_-]{31}$/);
    expect(generatePassword()).not.toBe(a);
  });
});

describe("registerNatsConfigCommand", () => {
  afterEach(() => vi.restoreAllMocks());

  it("adds `nats-config` to a commander program, with repeatable --cluster and --user", async () => {
    const program = new Command().exitOverride();
    registerNatsConfigCommand(program);
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const saved = process.env.ENSOUL_NATS_PASSWORD_NODE_A;
    process.env.ENSOUL_NATS_PASSWORD_NODE_A = "Abcdefghijkl-from-env";
    try {
      await program.parseAsync(["node", "ensoul", "nats-config", "--cluster", "alpha", "--cluster", "beta", "--user", "node-a:role=node:cluster=alpha", "-u", "bridge-b:role=bridge:cluster=beta"]);
    } finally {
      if (saved === undefined) delete process.env.ENSOUL_NATS_PASSWORD_NODE_A;
      else process.env.ENSOUL_NATS_PASSWORD_NODE_A = saved;
    }
    const printed = stdout.mock.calls.map((c) => String(c[0])).join("");
    expect(printed).toContain("ENSOUL_alpha: {");
    expect(printed).toContain("ENSOUL_beta: {");
    expect(printed).toContain("password: $ENSOUL_NATS_PASSWORD_NODE_A");
    expect(printed).not.toContain("Abcdefghijkl-from-env");
    expect(stderr.mock.calls.map((c) => String(c[0])).join("")).toContain("bridge-b: GENERATED password");
  });
});
