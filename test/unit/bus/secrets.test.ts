/**
 * One list of credential shapes (runtime/log/secrets.ts) and one redaction: what the gate
 * blocks in speech, the inspector hides in snapshots, and every error and log line about a
 * NATS connection hides, down to a password in a server URL.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { bouncer, isGateIntercept, type GateVerdict } from "../../../actors/gate/index.ts";
import { connectNatsBus, redactSecrets, REDACTED, SECRET_PATTERNS } from "../../../runtime/bus/index.ts";
import { sanitizeValue } from "../../../runtime/inspect/index.ts";
import { connectClusterBus } from "../../../runtime/node/index.ts";
import { fakeSecrets, proposal } from "../gate/support.ts";

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

describe("redactSecrets", () => {
  it("hides the password or token of a URL, and keeps the rest of it", () => {
    expect(redactSecrets("cannot reach NATS at nats://alice:s3cret@127.0.0.1:4222, tls://bob:p%40ss@h:1")).toBe(
      `cannot reach NATS at nats://alice:${REDACTED}@127.0.0.1:4222, tls://bob:${REDACTED}@h:1`,
    );
    expect(redactSecrets("nats://t0ken@127.0.0.1:4222")).toBe(`nats://${REDACTED}@127.0.0.1:4222`);
    expect(redactSecrets("nats://127.0.0.1:4222 and mail me at ada@example.com")).toBe("nats://127.0.0.1:4222 and mail me at ada@example.com");
  });

  it("hides every credential shape, keeping what names it", () => {
    for (const secret of Object.values(fakeSecrets)) expect(redactSecrets(`x ${secret} y`)).not.toContain(secret.slice(-12));
    expect(redactSecrets("api_key=Zq81xLmP02aaQw")).toBe(`api_key=${REDACTED}`);
    expect(redactSecrets("Authorization: Bearer abcdefghijklmnop.qrs")).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactSecrets(`key:\n${fakeSecrets.privateKey}\nend`)).toBe(`key:\n${REDACTED}\nend`);
    expect(redactSecrets("This is a risk-based approach to desk-top ergonomics.")).toBe("This is a risk-based approach to desk-top ergonomics.");
  });
});

describe("one list for the gate and the inspector", () => {
  const gate = bouncer();
  const blocks = (content: string) => isGateIntercept(gate.verify(proposal({ content }), {}) as GateVerdict);

  it("every shape the gate blocks, the inspector hides (JWTs and private keys included)", () => {
    for (const [name, secret] of Object.entries(fakeSecrets)) {
      expect(blocks(`here: ${secret}`), name).toBe(true);
      expect(JSON.stringify(sanitizeValue({ note: `here: ${secret}` })), name).not.toContain(secret.slice(-12));
    }
  });

  it("every shape the inspector hides, the gate blocks, but a URL's lone user part (ssh://git@host) only in logs", () => {
    const bearer = "Bearer abcdefghijklmnopqrstuvwxyz.123";
    expect(sanitizeValue({ header: bearer })).toEqual({ header: `Bearer ${REDACTED}` });
    expect(blocks(`send ${bearer}`)).toBe(true);
    expect(blocks("connect to nats://alice:s3cret-pw@nats.example.com:4222")).toBe(true);
    expect(blocks("clone ssh://git@github.com/ensoul/ensoul.git")).toBe(false);
    expect(SECRET_PATTERNS.filter((p) => p.redactOnly).map((p) => p.label)).toEqual(["a token in a URL"]);
  });
});

describe("NATS connection errors never carry the URL's credentials", () => {
  it("the bus and the node's connection say where, without the password", async () => {
    const port = await closedPort();
    const servers = `nats://alice:s3cret-pw@127.0.0.1:${port}`;
    const bus = await connectNatsBus({ servers, cluster: "c", reconnectTimeWaitMs: 10 }).catch((e: unknown) => e as Error);
    expect((bus as Error).message).toMatch(new RegExp(`^could not connect to NATS at nats://alice:\\[redacted\\]@127\\.0\\.0\\.1:${port}: `));
    const node = await connectClusterBus({ servers, cluster: "c" }).catch((e: unknown) => e as Error);
    expect((node as Error).message).toBe(`cannot reach NATS at nats://alice:${REDACTED}@127.0.0.1:${port} (connection refused)`);
  });
});
