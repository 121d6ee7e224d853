/**
 * PROTOCOL.md §4, checked on the bytes before anything decodes them: one MessagePack value
 * made only of nil, booleans, integers, finite floats, UTF-8 strings, binary, arrays and maps
 * with string keys, nested at most 32 deep, with nothing after it.
 *
 * Why on the bytes: msgpackr (what decodes them next) is more than MessagePack. It turns
 * extension 0x72 into records (and a later plain integer 0x40..0x7f into an object built from
 * one), extension 0 into `undefined`, extension -1 into a Date, and, with string-keyed maps,
 * any key into a string (`1` and `true` arrive as "1" and "true"). Once decoded, none of that
 * can be told from a plain value, so a client that used them would be accepted by this
 * reader and misread by any other. One pass over the bytes, skipping string and binary
 * contents by their length, costs about what walking the decoded value did.
 */
import { isUtf8 } from "node:buffer";
import { Unpackr } from "msgpackr";

/** Nested maps/arrays deeper than this are refused: no legitimate body needs it, and it bounds recursion. */
export const MAX_DEPTH = 32;

const NOT_PLAIN = "not plain msgpack (PROTOCOL.md §4)";
const TRUNCATED = "not msgpack: Unexpected end of MessagePack data";
/** Strings up to this many bytes are first checked for plain ASCII in JS; the rest (and any non-ASCII) go to the native UTF-8 check. */
const ASCII_SCAN = 256;

/** Extension types a reader is likely to meet, named so the reason says what the sender used. */
const EXTENSION_NAMES: Record<number, string> = {
  [-1]: "the timestamp extension",
  0: "msgpackr's undefined",
  0x72: "a msgpackr record",
  0x62: "msgpackr's bundled strings",
  0x74: "a msgpackr typed array",
  0x42: "a msgpackr BigInt",
  0x73: "a msgpackr Set",
  0x65: "a msgpackr Error",
  0x78: "a msgpackr RegExp",
  0x69: "a msgpackr structured-clone id",
  0x70: "a msgpackr structured-clone pointer",
};

/** Why `bytes` is not one plain MessagePack value (the reason, ready for a dead letter), or null. */
export function plainMsgpackProblem(bytes: Uint8Array, root = "envelope"): string | null {
  // One scanner for every call: the scan is synchronous, and a decode should allocate nothing it keeps.
  const scan = shared.reset(bytes, root);
  try {
    const problem = scan.value(0);
    if (problem) return problem;
    if (scan.pos !== bytes.length) return `not msgpack: trailing bytes after the first value (${bytes.length - scan.pos} after offset ${scan.pos})`;
    return null;
  } finally {
    scan.reset(EMPTY, root);
  }
}

const EMPTY = new Uint8Array(0);

// Records and structured cloning are msgpackr extensions other languages cannot write; the byte check has refused them anyway.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: "number", structuredClone: false });

/**
 * One plain MessagePack value read from `bytes`, §4 checked first: what every receiver of
 * envelopes and tool call bodies uses, so one piece of code decides what §4 allows. Never
 * throws; a reason quotes nothing of the message (`root` names it in a path: `reply.value.x`).
 */
export function decodePlainMsgpack(bytes: Uint8Array, root: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (!(bytes instanceof Uint8Array)) return { ok: false, reason: "payload is not bytes" };
  if (bytes.length === 0) return { ok: false, reason: "empty payload" };
  const problem = plainMsgpackProblem(bytes, root);
  if (problem) return { ok: false, reason: problem };
  try {
    return { ok: true, value: unpackr.unpack(bytes) };
  } catch (err) {
    return { ok: false, reason: `not msgpack: ${shortMessage(err)}` };
  }
}

function shortMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  // msgpackr quotes the decoded data in this one; a reason must stay short and content-free. The byte
  // scan has already ruled out trailing bytes, so whatever made msgpackr stop early, it is not that.
  if (msg.startsWith("Data read, but end of buffer not reached")) return "the decoder stopped before the end of the message";
  if (err instanceof RangeError) return "nested too deeply";
  return msg.split("\n")[0]!.slice(0, 120);
}

class Scan {
  pos = 0;
  private b: Uint8Array = EMPTY;
  private root = "";
  /** Per depth: where the key of the entry being read starts and ends, or (end -1) its array index. */
  private readonly keyStart = new Int32Array(MAX_DEPTH + 1);
  private readonly keyEnd = new Int32Array(MAX_DEPTH + 1);

  reset(bytes: Uint8Array, root: string): this {
    this.b = bytes;
    this.root = root;
    this.pos = 0;
    return this;
  }

  value(depth: number): string | null {
    if (depth > MAX_DEPTH) return `${NOT_PLAIN}: ${this.path(depth)} is nested deeper than ${MAX_DEPTH} levels`;
    const b = this.b;
    if (this.pos >= b.length) return TRUNCATED;
    const t = b[this.pos++];
    if (t < 0x80 || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return null;
    if (t < 0x90) return this.map(t & 0x0f, depth);
    if (t < 0xa0) return this.array(t & 0x0f, depth);
    if (t < 0xc0) return this.string(t & 0x1f, depth);
    switch (t) {
      case 0xc1:
        return `not msgpack: byte 0xc1 (never used in MessagePack) at offset ${this.pos - 1}`;
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return this.skip(this.length(1 << (t - 0xc4)));
      case 0xc7:
      case 0xc8:
      case 0xc9:
        return this.extension(depth, 1 << (t - 0xc7));
      case 0xca:
        return this.float(4, depth);
      case 0xcb:
        return this.float(8, depth);
      case 0xcc:
      case 0xd0:
        return this.skip(1);
      case 0xcd:
      case 0xd1:
        return this.skip(2);
      case 0xce:
      case 0xd2:
        return this.skip(4);
      case 0xcf:
      case 0xd3:
        return this.skip(8);
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        return this.extension(depth, 0);
      case 0xd9:
      case 0xda:
      case 0xdb:
        return this.string(this.length(1 << (t - 0xd9)), depth);
      case 0xdc:
      case 0xdd:
        return this.array(this.length(t === 0xdc ? 2 : 4), depth);
      default: // 0xde, 0xdf
        return this.map(this.length(t === 0xde ? 2 : 4), depth);
    }
  }

  private map(n: number, depth: number): string | null {
    if (n < 0) return TRUNCATED;
    for (let i = 0; i < n; i++) {
      const start = this.pos;
      const keyProblem = this.key(depth);
      if (keyProblem) return keyProblem;
      this.keyStart[depth] = start;
      this.keyEnd[depth] = this.pos;
      const p = this.value(depth + 1);
      if (p) return p;
    }
    return null;
  }

  private array(n: number, depth: number): string | null {
    if (n < 0) return TRUNCATED;
    for (let i = 0; i < n; i++) {
      this.keyStart[depth] = i;
      this.keyEnd[depth] = -1;
      const p = this.value(depth + 1);
      if (p) return p;
    }
    return null;
  }

  private key(depth: number): string | null {
    if (this.pos >= this.b.length) return TRUNCATED;
    const t = this.b[this.pos];
    let n: number;
    if (t >= 0xa0 && t < 0xc0) {
      this.pos++;
      n = t & 0x1f;
    } else if (t >= 0xd9 && t <= 0xdb) {
      this.pos++;
      n = this.length(1 << (t - 0xd9));
    } else {
      return `${NOT_PLAIN}: a key of ${this.path(depth)} is ${typeName(t)}, not a string`;
    }
    if (n < 0 || this.pos + n > this.b.length) return TRUNCATED;
    if (!utf8(this.b, this.pos, n)) return `${NOT_PLAIN}: a key of ${this.path(depth)} is not valid UTF-8`;
    this.pos += n;
    return null;
  }

  private string(n: number, depth: number): string | null {
    if (n < 0 || this.pos + n > this.b.length) return TRUNCATED;
    if (!utf8(this.b, this.pos, n)) return `${NOT_PLAIN}: ${this.path(depth)} is not valid UTF-8`;
    this.pos += n;
    return null;
  }

  private float(size: 4 | 8, depth: number): string | null {
    if (this.pos + size > this.b.length) return TRUNCATED;
    const view = new DataView(this.b.buffer, this.b.byteOffset + this.pos, size);
    const f = size === 4 ? view.getFloat32(0) : view.getFloat64(0);
    this.pos += size;
    return Number.isFinite(f) ? null : `${NOT_PLAIN}: ${this.path(depth)} is not a finite number`;
  }

  /** An extension of any kind is refused; `lengthBytes` 0 is a fixext (its type byte follows at once). */
  private extension(depth: number, lengthBytes: number): string | null {
    if (lengthBytes > 0 && this.length(lengthBytes) < 0) return TRUNCATED;
    if (this.pos >= this.b.length) return TRUNCATED;
    const type = (this.b[this.pos] << 24) >> 24; // the type byte is signed
    const name = EXTENSION_NAMES[type];
    return `${NOT_PLAIN}: ${this.path(depth)} holds extension type ${type}${name ? ` (${name})` : ""}; no extension types are allowed`;
  }

  /** Reads a big-endian length of 1, 2 or 4 bytes; -1 when the bytes run out. */
  private length(size: number): number {
    if (this.pos + size > this.b.length) return -1;
    const b = this.b;
    const p = this.pos;
    const v = size === 1 ? b[p] : size === 2 ? (b[p] << 8) | b[p + 1] : ((b[p] << 24) >>> 0) + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
    this.pos += size;
    return v;
  }

  private skip(n: number): string | null {
    if (n < 0 || this.pos + n > this.b.length) return TRUNCATED;
    this.pos += n;
    return null;
  }

  /** `envelope.body.meta[2].x` for the value being read at `depth`; only built for a reason. */
  private path(depth: number): string {
    let out = this.root;
    for (let d = 0; d < depth; d++) {
      if (this.keyEnd[d] === -1) out += `[${this.keyStart[d]}]`;
      else out += `.${keyText(this.b, this.keyStart[d], this.keyEnd[d])}`;
    }
    return out;
  }
}

/** A key already checked to be a str, as text for a reason (at most 32 characters of it). */
function keyText(b: Uint8Array, start: number, end: number): string {
  const t = b[start];
  const header = t >= 0xa0 && t < 0xc0 ? 1 : 1 + (1 << (t - 0xd9));
  return Buffer.from(b.buffer, b.byteOffset + start + header, end - start - header).toString("utf8").slice(0, 32);
}

function utf8(b: Uint8Array, start: number, n: number): boolean {
  if (n <= ASCII_SCAN) {
    let i = start;
    const end = start + n;
    while (i < end && b[i] < 0x80) i++;
    if (i === end) return true;
  }
  return isUtf8(b.subarray(start, start + n));
}

const shared = new Scan();

function typeName(t: number): string {
  if (t < 0x80 || t >= 0xe0 || (t >= 0xcc && t <= 0xd3)) return "an integer";
  if (t < 0x90 || t === 0xde || t === 0xdf) return "a map";
  if (t < 0xa0 || t === 0xdc || t === 0xdd) return "an array";
  if (t === 0xc0) return "nil";
  if (t === 0xc2 || t === 0xc3) return "a boolean";
  if (t === 0xca || t === 0xcb) return "a float";
  if (t >= 0xc4 && t <= 0xc6) return "binary";
  if (t === 0xc1) return "the never-used byte 0xc1";
  return "an extension";
}
