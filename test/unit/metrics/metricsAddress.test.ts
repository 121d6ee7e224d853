/**
 * `--metrics [host:]port` and the categories dead letters are counted by: both turn free text
 * into something small and safe (an address; a label from a fixed list).
 */
import { describe, expect, it } from "vitest";
import { DEAD_LETTER_CATEGORIES, deadLetterCategory } from "../../../runtime/bus/index.ts";
import { parseMetricsAddress } from "../../../runtime/metrics/index.ts";

describe("--metrics", () => {
  it("takes a port (on 127.0.0.1) or host:port", () => {
    expect(parseMetricsAddress("9464")).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(parseMetricsAddress("0")).toEqual({ host: "127.0.0.1", port: 0 });
    expect(parseMetricsAddress("0.0.0.0:9464")).toEqual({ host: "0.0.0.0", port: 9464 });
    expect(parseMetricsAddress("localhost:80")).toEqual({ host: "localhost", port: 80 });
    expect(parseMetricsAddress("[::1]:9464")).toEqual({ host: "::1", port: 9464 });
  });

  it("refuses anything else in one line", () => {
    for (const bad of ["", "http://x:1", "70000", "x:", ":9464", "a b:1", "9464/metrics"]) {
      expect(() => parseMetricsAddress(bad), bad).toThrow(/^--metrics takes a port \(0-65535\) or host:port, e\.g\. 9464 or 0\.0\.0\.0:9464; got '/);
    }
  });
});

describe("dead-letter categories", () => {
  it("names the reasons ensoul writes, and nothing a sender wrote", () => {
    const cases: [string, string][] = [
      ["oversized: 2000000 bytes exceeds the limit of 1048576 bytes", "oversized"],
      ["not msgpack: byte 0xc1 (never used in MessagePack) at offset 0", "invalid-envelope"],
      ["not plain msgpack (PROTOCOL.md §4): $.body holds extension type 1; no extension types are allowed", "invalid-envelope"],
      ["invalid perception envelope: body.content: expected string", "invalid-envelope"],
      ["unexpected kind speech (this receiver takes perception)", "unexpected-kind"],
      ["envelope is addressed to 'x' but arrived on the perceive subject of 'y'", "misaddressed"],
      ["unknown soul 'mallory' (no node of cluster 'c' hosts it)", "unknown-soul"],
      ["no soul: invalid soulId \"*\"; no stream consumer delivers this subject", "bad-subject"],
      ["perception routed to unknown process 'x' of soul 'y'", "unknown-process"],
      ["perception on the perceive subject carries 'internal': only the node hosting a soul may set it", "node-only-field"],
      ["soul 'sam' has expired; it takes no more perceptions", "expired-soul"],
      ["handler failed on delivery 5, the last one allowed: boom", "delivery-exhausted"],
      ["a stream publish on a gate verify subject (not answered)", "gate-request"],
      ["something a stranger wrote", "other"],
    ];
    for (const [reason, category] of cases) expect(deadLetterCategory(reason), reason).toBe(category);
    expect(new Set(cases.map(([, c]) => c))).toEqual(new Set(DEAD_LETTER_CATEGORIES));
  });
});
