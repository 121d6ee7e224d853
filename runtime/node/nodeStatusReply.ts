/**
 * The NodeStatus bodies a node sends (docs/PROTOCOL.md 12.2, 12.3): its heartbeat and its
 * `status` replies, each one message under MAX_REPLY_BYTES however many souls it hosts.
 *
 * At 100,000 souls every soul's entry is several MB of msgpack, above NATS's max_payload: the
 * publish failed and clients lost every soul of the node. So a body lists as many entries as
 * fit (live souls first), says `soulCount` and `soulsPartial`, and a client asks for the rest
 * (`soulIds`, or pages with `after`/`limit`).
 *
 * Building a heartbeat must not cost every soul's entry each second either: an entry is
 * encoded once per registry entry object (a patched soul gets a new one, nodeRegistry.ts), so
 * a beat re-encodes only the souls that changed, and the body is spliced from the encoded
 * entries rather than encoded whole.
 */
import { encodeControl, MAX_REPLY_BYTES, type NodeStatus, type SoulStatusEntry, type StatusRequest } from "./controlProtocol.ts";
import { ControlRequestError } from "./controlRequestError.ts";
import { registryStatusHead, soulStatusEntry, type NodeRegistry, type RegistryContext, type RegistrySoul } from "./nodeRegistry.ts";

export interface StatusRepliesOptions {
  /** Brings the registry up to date before a body is built (the node's feed batches its patches). */
  flush?: () => void;
  /** Whether the node lists the soul (under automatic placement, only the souls it runs now; default all). */
  lists?: (soulId: string) => boolean;
  /** Under automatic placement: why the soul runs here (its entry's `placement`). */
  placementOf?: (soulId: string) => string;
}

export interface StatusReplies {
  /** The heartbeat's body, encoded: every soul if they fit, else live souls first and as many as fit. */
  heartbeat(): Uint8Array;
  /** The `status` reply, encoded (`{}` is the heartbeat's body). Unknown `after`: a ControlRequestError. */
  reply(request: StatusRequest): Uint8Array;
  /** Every listed soul, unbounded: for in-process callers (`EnsoulNode.status()`), never sent. */
  full(): NodeStatus;
  /** One soul's entry now, if the node lists it. */
  entry(soulId: string): SoulStatusEntry | undefined;
}

/** Room left for the keys and headers spliced around the entries (`souls`, `soulsPartial`, `next` and its id). */
const SPLICE_RESERVE = 64;

interface Picked {
  items: Uint8Array[];
  /** The last soul listed, when souls after it were left out. */
  cut?: string;
}

export function nodeStatusReplies(registry: NodeRegistry, options: StatusRepliesOptions = {}): StatusReplies {
  const { flush, lists = () => true, placementOf } = options;
  // The registry's souls are fixed at start: their order, and where each one is in it, once.
  const order = [...registry.getSnapshot().context.souls.keys()];
  const position = new Map(order.map((id, i) => [id, i]));
  const longestId = order.reduce((n, id) => Math.max(n, Buffer.byteLength(id)), 0);
  const listedCount = () => (options.lists ? order.reduce((n, id) => n + (lists(id) ? 1 : 0), 0) : order.length);
  const { entryOf, encoded } = entryEncoder(placementOf);

  /** Entries of `ids` (those listed, in order) until `limit` or the byte budget. */
  const pick = (ctx: RegistryContext, ids: Iterable<string>, budget: number, limit = Number.POSITIVE_INFINITY): Picked => {
    const items: Uint8Array[] = [];
    let used = 0;
    let last: string | undefined;
    for (const id of ids) {
      const soul = ctx.souls.get(id);
      if (!soul || !lists(id)) continue;
      const bytes = items.length < limit ? encoded(soul) : undefined;
      if (!bytes || used + bytes.length > budget) return { items, ...(last !== undefined ? { cut: last } : {}) };
      items.push(bytes);
      used += bytes.length;
      last = id;
    }
    return { items };
  };

  /** The body: the head's fields, `soulCount`, then what was picked. */
  const body = (ctx: RegistryContext, select: (budget: number) => Picked, paged: boolean): Uint8Array => {
    const soulCount = listedCount();
    const head = { ...registryStatusHead(ctx), soulCount };
    const budget = MAX_REPLY_BYTES - encodeControl(head).length - SPLICE_RESERVE - longestId;
    const { items, cut } = select(budget);
    const partial = items.length < soulCount;
    return withArray(encodeControl({ ...head, ...(partial ? { soulsPartial: true } : {}), ...(paged && cut !== undefined ? { next: cut } : {}) }), "souls", items);
  };

  const liveFirst = function* (ctx: RegistryContext): Generator<string> {
    yield* ctx.liveSouls;
    for (const id of order) if (!ctx.liveSouls.has(id)) yield id;
  };
  const pageFrom = function* (start: number): Generator<string> {
    for (let i = start; i < order.length; i++) yield order[i] as string;
  };
  const current = () => (flush?.(), registry.getSnapshot().context);
  const heartbeat = () => {
    const ctx = current();
    return body(ctx, (budget) => pick(ctx, liveFirst(ctx), budget), false);
  };

  return {
    heartbeat,
    reply(request) {
      const { soulIds, after, limit } = request;
      if (soulIds === undefined && after === undefined && limit === undefined) return heartbeat();
      const start = after === undefined ? 0 : (position.get(after) ?? -1) + 1;
      if (start === 0 && after !== undefined) throw new ControlRequestError("not-found", `status: the node hosts no soul '${after}'`);
      const ctx = current();
      if (soulIds !== undefined) return body(ctx, (budget) => pick(ctx, new Set(soulIds), budget), false);
      return body(ctx, (budget) => pick(ctx, pageFrom(start), budget, limit), true);
    },
    full() {
      const ctx = current();
      return { ...registryStatusHead(ctx), souls: order.filter(lists).map((id) => entryOf(ctx.souls.get(id) as RegistrySoul)) };
    },
    entry(soulId) {
      const soul = current().souls.get(soulId);
      return soul && lists(soulId) ? entryOf(soul) : undefined;
    },
  };
}

/**
 * A soul's entry, and its encoding: kept per registry entry object, which never changes (a
 * patched soul gets a new one), so only the souls patched since the last body are encoded again.
 */
function entryEncoder(placementOf: ((soulId: string) => string) | undefined) {
  const cache = new WeakMap<RegistrySoul, { placement: string | undefined; bytes: Uint8Array }>();
  const entryOf = (soul: RegistrySoul, placement = placementOf?.(soul.id)): SoulStatusEntry => ({
    ...soulStatusEntry(soul),
    ...(placement !== undefined ? { placement } : {}),
  });
  const encoded = (soul: RegistrySoul): Uint8Array => {
    const placement = placementOf?.(soul.id);
    const hit = cache.get(soul);
    if (hit && hit.placement === placement) return hit.bytes;
    // A copy: msgpackr hands out views of its shared buffer.
    const bytes = Uint8Array.from(encodeControl(entryOf(soul, placement)));
    cache.set(soul, { placement, bytes });
    return bytes;
  };
  return { entryOf, encoded };
}

/**
 * `map` (an encoded msgpack map) with one more key, `key`, whose value is the array of the
 * already encoded `items`: the body assembled from cached entries without encoding them again.
 */
export function withArray(map: Uint8Array, key: string, items: readonly Uint8Array[]): Uint8Array {
  const first = map[0] as number;
  let count: number;
  let skip: number;
  if (first >= 0x80 && first <= 0x8f) [count, skip] = [first & 0x0f, 1];
  else if (first === 0xde) [count, skip] = [((map[1] as number) << 8) | (map[2] as number), 3];
  else throw new Error(`not a msgpack map of at most 65,535 keys (0x${first.toString(16)})`);
  const keys = count + 1;
  const mapHeader = keys < 16 ? [0x80 | keys] : [0xde, keys >> 8, keys & 0xff];
  const n = items.length;
  const arrayHeader = n < 16 ? [0x90 | n] : n < 0x10000 ? [0xdc, n >> 8, n & 0xff] : [0xdd, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  const keyBytes = encodeControlString(key);
  return Buffer.concat([Uint8Array.from(mapHeader), map.subarray(skip), keyBytes, Uint8Array.from(arrayHeader), ...items]);
}

/** A short string as msgpack (fixstr or str8). */
function encodeControlString(s: string): Uint8Array {
  const utf8 = Buffer.from(s, "utf8");
  if (utf8.length > 255) throw new Error("key too long");
  return Buffer.concat([Uint8Array.from(utf8.length < 32 ? [0xa0 | utf8.length] : [0xd9, utf8.length]), utf8]);
}
