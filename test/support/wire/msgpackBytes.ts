/**
 * MessagePack written byte by byte, the way a client in another language (or a hostile one)
 * might put it on the wire: tests build exactly the bytes they mean, including what no
 * well-behaved encoder of ours would ever write (extension types, non-string keys, the
 * never-used 0xc1 byte).
 */

export type Bytes = Uint8Array;

export const concat = (...parts: Bytes[]): Bytes => new Uint8Array(parts.flatMap((p) => [...p]));
export const hex = (h: string): Bytes => new Uint8Array(Buffer.from(h.replace(/\s+/g, ""), "hex"));

/** A str of any length (fixstr, str8, str16), UTF-8 unless raw bytes are given. */
export function str(s: string | Bytes): Bytes {
  const b = typeof s === "string" ? new Uint8Array(Buffer.from(s, "utf8")) : s;
  if (b.length < 32) return concat(new Uint8Array([0xa0 | b.length]), b);
  if (b.length < 256) return concat(new Uint8Array([0xd9, b.length]), b);
  return concat(new Uint8Array([0xda, b.length >> 8, b.length & 0xff]), b);
}

/** A non-negative integer in its shortest encoding, or int64 (0xd3) when `wide`. */
export function int(n: number, wide = false): Bytes {
  if (wide) {
    const b = Buffer.alloc(9);
    b[0] = 0xd3;
    b.writeBigInt64BE(BigInt(n), 1);
    return new Uint8Array(b);
  }
  if (n >= 0 && n < 128) return new Uint8Array([n]);
  const b = Buffer.alloc(5);
  b[0] = 0xce;
  b.writeUInt32BE(n, 1);
  return new Uint8Array(b);
}

export const nil: Bytes = new Uint8Array([0xc0]);
export const bool = (b: boolean): Bytes => new Uint8Array([b ? 0xc3 : 0xc2]);

/** A map whose keys are already encoded (so a key may be an integer, a boolean, anything). */
export function mapOf(entries: [Bytes, Bytes][]): Bytes {
  const n = entries.length;
  const head = n < 16 ? new Uint8Array([0x80 | n]) : new Uint8Array([0xde, n >> 8, n & 0xff]);
  return concat(head, ...entries.flatMap(([k, v]) => [k, v]));
}

/** A map with string keys. */
export const map = (entries: Record<string, Bytes>): Bytes => mapOf(Object.entries(entries).map(([k, v]) => [str(k), v]));

/** The fields of a valid perception envelope, as encoded values, for a test to change one of. */
export function perceptionFields(to: string, id = "01J9ZK3V8Q6W4R2T0Y5X7N1M3P", body: Record<string, Bytes> = {}): Record<string, Bytes> {
  return {
    v: int(1),
    id: str(id),
    kind: str("perception"),
    from: str("bridge-raw"),
    to: str(to),
    ts: int(1_700_000_000_000, true),
    body: map({ action: str("said"), content: str("hi"), name: str("ada"), ...body }),
  };
}

export const perceptionBytes = (to: string, id?: string, body?: Record<string, Bytes>): Bytes => map(perceptionFields(to, id, body));
