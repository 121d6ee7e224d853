/**
 * Opening the souls a node gained (runtime/node/failover/soulMoves.ts): a soul whose opening
 * fails, for whatever reason (its old node still holds it, or its history kept changing while
 * it was read), is left to be opened again shortly; the other souls open, and nothing throws
 * (one soul's opening never stops the node's moves).
 */
import { describe, expect, it } from "vitest";
import { LeaseHeldError } from "../../../runtime/bus/index.ts";
import { openSouls, type NodeFailover } from "../../../runtime/node/failover/index.ts";

/** The failover's opening, failing for the souls named. */
function failoverFailing(failures: Record<string, Error>): { failover: NodeFailover; opened: string[] } {
  const opened: string[] = [];
  const prepare = async (id: string) => {
    const failure = failures[id];
    if (failure) throw failure;
    opened.push(id);
  };
  return { failover: { prepare } as unknown as NodeFailover, opened };
}

describe("opening the souls a node gained", () => {
  it("leaves a soul whose opening failed to be opened again, says why, and opens the others", async () => {
    const { failover, opened } = failoverFailing({
      held: new LeaseHeldError("held", "a"),
      busy: new Error("soul 'busy': its history kept changing while node b opened it (5 reads)"),
    });
    const lines: string[] = [];
    const again = await openSouls(failover, ["one", "held", "busy", "two"], (line) => lines.push(line));
    expect(again.sort()).toEqual(["busy", "held"]);
    expect(opened.sort()).toEqual(["one", "two"]);
    expect(lines.some((l) => /soul held is still owned by node a/.test(l))).toBe(true);
    expect(lines.some((l) => /soul busy was not opened here \(soul 'busy': its history kept changing.*\): tried again shortly/.test(l))).toBe(true);
  });
});
