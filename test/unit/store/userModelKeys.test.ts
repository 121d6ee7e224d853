import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assertKeyPart } from "../../../runtime/store/keys.ts";
import { userModelKey, userModelPrefix, userOfModelKey } from "../../../runtime/store/userModelKeys.ts";

describe("user model keys", () => {
  it("keeps a plain id as its own key, so models saved before ids were encoded are found", () => {
    expect(userModelKey("Tom", 3)).toEqual(["Tom", 3]);
    expect(userModelKey("50% off", 1)).toEqual(["50% off", 1]);
    expect(userModelPrefix("U123")).toEqual(["U123"]);
  });

  it("escapes an id that cannot be a key part, under a number no plain id can be", () => {
    expect(userModelKey("Ada\nLovelace", 1)).toEqual([0, "Ada%0ALovelace", 1]);
    expect(userOfModelKey([0, "Ada%0ALovelace", 1])).toBe("Ada\nLovelace");
    expect(userOfModelKey([0, "100%25%0D", 2])).toBe("100%\r");
  });

  it("reads back exactly the id any key was made for, and every key is a valid key", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 64 }), fc.integer({ min: 1, max: 1e6 }), (id, version) => {
        const key = userModelKey(id, version);
        for (const part of key) assertKeyPart(part);
        expect(userOfModelKey(key)).toBe(id);
        expect(key.at(-1)).toBe(version);
      }),
    );
  });
});
