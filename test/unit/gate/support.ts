import type { Proposal } from "../../../actors/vocabulary/Proposal.ts";
import type { Gate, GateVerdict } from "../../../actors/gate/index.ts";

let seq = 0;

/** A proposal as a soul's review would see it. */
export function proposal(overrides: Partial<Proposal> = {}): Proposal {
  const n = seq++;
  return {
    id: `s1:${n}:0`,
    soulId: "s1",
    turnId: `s1:${n}`,
    seq: 0,
    kind: "speak",
    content: "hello there",
    ts: 1_700_000_000_000,
    ...overrides,
  };
}

/** A gate that records its calls and answers with `verify`. */
export function spyGate(
  name: string,
  priority: number,
  verify: (p: Proposal) => GateVerdict | Promise<GateVerdict> = (p) => p,
  extra: Partial<Gate> = {},
): Gate & { calls: Proposal[] } {
  const calls: Proposal[] = [];
  return {
    name,
    priority,
    calls,
    verify(p) {
      calls.push(p);
      return verify(p);
    },
    ...extra,
  };
}

/** Credential-shaped strings, assembled so this file itself does not look like it leaks any. */
export const fakeSecrets = {
  anthropic: ["sk", "ant", "api03", "Xy7kQ2mN9pL4vR8tW1zB6cD3fG5hJ0aS"].join("-"),
  openai: ["sk", "proj", "4fT9qLm2Xz7Rw1Vb8Nc3Kd6Hs0Jp5Ge"].join("-"),
  groq: "gsk" + "_" + "8Hq2Lw9Zx4Rt7Vm1Nb6Kc3Jd0Fs5Gp2A",
  aws: "AKIA" + "IOSFODNN7EXAMPLE",
  github: "ghp" + "_" + "16C7e42F292c6912E7710c838347Ae178B4a",
  slack: ["xoxb", "1234567890", "0987654321", "AbCdEfGhIjKlMnOp"].join("-"),
  privateKey: "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
  jwt: ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"].join("."),
  generic: "api" + "_key=" + "Zq81xLmP02aaQw",
};
