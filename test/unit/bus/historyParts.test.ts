/**
 * Joining the parts of history records sent in parts (natsSoulHistory.ts): a whole record is
 * read back under its last part's sequence; parts that do not make a whole record in order
 * (a writer fenced off or killed halfway, a purge that cut into one) are left out, and the
 * records around them are kept.
 */
import { describe, expect, it } from "vitest";
import { joinParts, type StoredPart } from "../../../runtime/bus/natsSoulHistory.ts";

const bytes = (...b: number[]) => new Uint8Array(b);
const whole = (seq: number, b: number): StoredPart => ({ seq, data: bytes(b) });
const part = (seq: number, index: number, count: number, start: number, b: number): StoredPart => ({ seq, data: bytes(b), part: `${index}/${count}`, start: index === 1 ? "" : String(start) });
const read = (stored: StoredPart[]) => joinParts(stored).map((r) => [r.seq, [...r.data]]);

describe("history records sent in parts", () => {
  it("joins a record's parts in order, under its last part's sequence, between records sent whole", () => {
    expect(read([whole(1, 9), part(4, 1, 3, 0, 1), part(7, 2, 3, 4, 2), part(8, 3, 3, 4, 3), whole(12, 8)])).toEqual([
      [1, [9]],
      [8, [1, 2, 3]],
      [12, [8]],
    ]);
  });

  it("leaves out a record whose writer stopped halfway, and keeps what came after it", () => {
    // Two of three parts, then another writer's claim (fenced the first), then a whole record in parts.
    expect(read([part(2, 1, 3, 0, 1), part(3, 2, 3, 2, 2), whole(5, 7), part(6, 1, 2, 0, 4), part(9, 2, 2, 6, 5)])).toEqual([
      [5, [7]],
      [9, [4, 5]],
    ]);
  });

  it("leaves out parts whose beginning is gone (a purge cut into the record) or that belong to another record", () => {
    expect(read([part(3, 2, 3, 2, 2), part(4, 3, 3, 2, 3), whole(5, 7)])).toEqual([[5, [7]]]);
    // A part 2 naming another first part is not this record's.
    expect(read([part(2, 1, 2, 0, 1), part(3, 2, 2, 99, 2)])).toEqual([]);
    // A new first part before the last one came: the unfinished record is dropped, the new one joined.
    expect(read([part(2, 1, 3, 0, 1), part(3, 1, 2, 0, 4), part(4, 2, 2, 3, 5)])).toEqual([[4, [4, 5]]]);
  });
});
