/**
 * A nats-server in operator (decentralised JWT) mode for tests, without the `nsc` tool: an
 * operator, one account with JetStream, a system account, and users whose `.creds` files are
 * what `nsc generate creds` writes (the user's JWT, then its NKey seed). The JWTs are signed
 * with the real NKeys (ed25519), as nats-server checks them.
 */
import { createHash } from "node:crypto";
import { createAccount, createOperator, createUser, type KeyPair } from "@nats-io/nkeys";

const b64 = (data: Uint8Array | string) => Buffer.from(data).toString("base64url");

/** A NATS JWT: claims `sub`, `name` and `nats`, issued (signed) by `issuer`. */
function natsJwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = b64(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }));
  const claims: Record<string, unknown> = { iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject, nats: { ...nats, version: 2 } };
  claims.jti = createHash("sha256").update(JSON.stringify(claims)).digest("base64url");
  const payload = b64(JSON.stringify(claims));
  const signature = b64(issuer.sign(new TextEncoder().encode(`${header}.${payload}`)));
  return `${header}.${payload}.${signature}`;
}

const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };

export interface OperatorMode {
  /** nats-server config text: the operator, a memory resolver preloaded with both accounts. */
  config: string;
  /** The text of a `.creds` file for a new user of the account, with no permission limits. */
  creds(name: string): string;
}

export function operatorMode(): OperatorMode {
  const operator = createOperator();
  const account = createAccount();
  const system = createAccount();
  const accountJwt = natsJwt(operator, account.getPublicKey(), "ensoul", {
    type: "account",
    limits: { ...UNLIMITED, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 },
  });
  const systemJwt = natsJwt(operator, system.getPublicKey(), "SYS", { type: "account", limits: UNLIMITED });
  const config = [
    `operator: ${natsJwt(operator, operator.getPublicKey(), "test-operator", { type: "operator" })}`,
    `system_account: ${system.getPublicKey()}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    `  ${account.getPublicKey()}: ${accountJwt}`,
    `  ${system.getPublicKey()}: ${systemJwt}`,
    "}",
    "",
  ].join("\n");
  return {
    config,
    creds(name) {
      const user = createUser();
      const jwt = natsJwt(account, user.getPublicKey(), name, { type: "user", pub: {}, sub: {}, subs: -1, data: -1, payload: -1 });
      const seed = new TextDecoder().decode(user.getSeed());
      return [
        "-----BEGIN NATS USER JWT-----",
        jwt,
        "------END NATS USER JWT------",
        "",
        "************************* IMPORTANT *************************",
        "NKEY Seed printed below can be used to sign and prove identity.",
        "NKEYs are sensitive and should be treated as secrets.",
        "",
        "-----BEGIN USER NKEY SEED-----",
        seed,
        "------END USER NKEY SEED------",
        "",
        "*************************************************************",
        "",
      ].join("\n");
    },
  };
}
