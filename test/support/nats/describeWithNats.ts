/**
 * The rule for a missing nats-server: skip locally with the install hint, fail in CI
 * (any non-empty `CI`), because a CI run that silently skipped every NATS test would report green
 * for a bus that was never exercised.
 */
import { describe, it } from "vitest";
import { inCi } from "../ci/inCi.ts";
import { INSTALL_HINT, natsAvailable } from "./natsServer.ts";

/**
 * `describe` for suites that need a real server. Missing binary: skipped with the install
 * hint locally; a failing test in CI.
 */
export function describeWithNats(name: string, fn: () => void): void {
  if (natsAvailable()) {
    describe(name, fn);
    return;
  }
  const message = `nats-server not found (looked in ${process.env.NATS_SERVER_BIN ? `NATS_SERVER_BIN=${process.env.NATS_SERVER_BIN}` : "PATH and /usr/sbin"}): ${INSTALL_HINT}`;
  if (inCi()) {
    describe(name, () => {
      it("requires nats-server in CI", () => {
        throw new Error(message);
      });
    });
    return;
  }
  console.warn(`[skip] ${name}: ${message}`);
  describe.skip(`${name} (skipped: ${message})`, fn);
}

