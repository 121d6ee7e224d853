/**
 * Heartbeats and status replies stay one message at any number of souls: 20,000 souls with
 * 128-character ids are ~3.5 MB of entries, so the heartbeat lists live souls first and as many
 * as fit, says `soulsPartial`, and the rest is had by `soulIds` or by pages.
 */
import { describe, expect, it } from "vitest";
import { createNodeRegistry, decodeControl, type NodeStatus, type RegistrySoul } from "../../../runtime/node/index.ts";
import { ControlRequestError } from "../../../runtime/node/controlRequestError.ts";
import { nodeStatusReplies, withArray } from "../../../runtime/node/nodeStatusReply.ts";
import { encodeControl, MAX_REPLY_BYTES } from "../../../runtime/node/controlProtocol.ts";

const COUNT = 20_000;
const longId = (i: number) => `soul-${String(i).padStart(6, "0")}-`.padEnd(128, "x");
const soulEntry = (id: string): RegistrySoul => ({ id, name: "A soul with a long display name", process: "introduction", turns: 12, pending: 0, status: "passivated", activations: 0, lastTurnAt: 0 });
const ids = Array.from({ length: COUNT }, (_, i) => longId(i));
const decode = (bytes: Uint8Array) => decodeControl<NodeStatus>(bytes) as NodeStatus;

function setup(options: Parameters<typeof nodeStatusReplies>[1] = {}) {
  const registry = createNodeRegistry({ node: "n1", cluster: "c", bus: "nats", souls: ids.map(soulEntry) });
  return { registry, replies: nodeStatusReplies(registry, options) };
}

describe("a node's status bodies with 20,000 souls of long ids", () => {
  it("keep the heartbeat under MAX_REPLY_BYTES, live souls first, saying soulsPartial and soulCount", () => {
    const { registry, replies } = setup();
    const live = [ids[19_999], ids[10_000]] as string[];
    registry.trigger.soulsPatched({ patches: { [live[0] as string]: { status: "running" }, [live[1] as string]: { status: "active" } } });
    const bytes = replies.heartbeat();
    expect(bytes.length).toBeLessThanOrEqual(MAX_REPLY_BYTES);
    const status = decode(bytes);
    expect(status).toMatchObject({ node: "n1", cluster: "c", state: "starting", soulCount: COUNT, soulsPartial: true, counters: { perceptions: 0 } });
    expect(status.souls.length).toBeGreaterThan(1_000);
    expect(status.souls.length).toBeLessThan(COUNT);
    expect(status.souls.slice(0, 2).map((s) => [s.id, s.status])).toEqual([
      [live[0], "running"],
      [live[1], "active"],
    ]);
    expect(status.souls[2]).toEqual({ id: ids[0], name: "A soul with a long display name", process: "introduction", turns: 12, pending: 0, status: "passivated" });
    expect("next" in status).toBe(false);
  });

  it("re-encode only the souls that changed between two heartbeats", () => {
    const { registry, replies } = setup();
    const first = decode(replies.heartbeat());
    registry.trigger.soulsPatched({ patches: { [ids[1] as string]: { turns: 13 } } });
    const second = decode(replies.heartbeat());
    expect(second.souls.length).toBe(first.souls.length);
    expect(second.souls[1]?.turns).toBe(13);
    expect(second.souls.filter((s, i) => s.turns !== first.souls[i]?.turns).map((s) => s.id)).toEqual([ids[1]]);
  });

  it("page through every soul with after/limit, each page one message, next absent at the end", () => {
    const { replies } = setup();
    expect(decode(replies.reply({})).next).toBeUndefined(); // `{}` is the heartbeat's body: not a page
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const bytes = replies.reply({ limit: 7_000, ...(after !== undefined ? { after } : {}) });
      expect(bytes.length).toBeLessThanOrEqual(MAX_REPLY_BYTES);
      const page = decode(bytes);
      expect(page).toMatchObject({ soulCount: COUNT, soulsPartial: true });
      seen.push(...page.souls.map((s) => s.id));
      after = page.next;
      pages++;
    } while (after !== undefined);
    expect(pages).toBeGreaterThan(3); // cut by size before the limit: ~5,500 such entries fit
    expect(seen).toEqual(ids);
  });

  it("stop a page at limit, and answer an unknown `after` with not-found", () => {
    const { replies } = setup();
    const page = decode(replies.reply({ after: ids[9], limit: 3 }));
    expect(page.souls.map((s) => s.id)).toEqual(ids.slice(10, 13));
    expect(page.next).toBe(ids[12]);
    expect(page.soulsPartial).toBe(true);
    const last = decode(replies.reply({ after: ids[COUNT - 2], limit: 5 }));
    expect(last.souls.map((s) => s.id)).toEqual([ids[COUNT - 1]]);
    expect(last.next).toBeUndefined();
    expect(() => replies.reply({ after: "nobody" })).toThrow(ControlRequestError);
  });

  it("answer soulIds with those souls' entries only, unknown ids left out", () => {
    const { replies } = setup();
    const status = decode(replies.reply({ soulIds: [ids[19_998] as string, "ghost", ids[3] as string] }));
    expect(status.souls.map((s) => s.id)).toEqual([ids[19_998], ids[3]]);
    expect(status).toMatchObject({ soulCount: COUNT, soulsPartial: true });
  });

  it("under automatic placement, list only the souls the node runs, each with its placement", () => {
    const { replies } = setup({ lists: (id) => id === ids[5] || id === ids[6], placementOf: (id) => `pinned ${id.slice(0, 11)}` });
    const status = decode(replies.heartbeat());
    expect(status.soulCount).toBe(2);
    expect(status.soulsPartial).toBeUndefined();
    expect(status.souls.map((s) => s.placement)).toEqual(["pinned soul-000005", "pinned soul-000006"]);
    expect(replies.full().souls).toHaveLength(2);
    expect(replies.entry(ids[7] as string)).toBeUndefined();
  });
});

describe("withArray", () => {
  it("adds an array of encoded items to an encoded map, fixmap or map16, any array size", () => {
    for (const keys of [1, 14, 15, 20]) {
      for (const n of keys === 1 ? [0, 15, 16, 70_000] : [0, 15, 16]) {
        const head = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, i]));
        const items = Array.from({ length: n }, (_, i) => encodeControl({ i }));
        const decoded = decodeControl<Record<string, unknown>>(withArray(encodeControl(head), "souls", items));
        expect(decoded).toEqual({ ...head, souls: Array.from({ length: n }, (_, i) => ({ i })) });
      }
    }
  });
});
