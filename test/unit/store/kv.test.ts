import { describe, expect, it } from "vitest";
import { StoreError } from "../../../runtime/store/index.ts";
import { tempStores } from "../../support/store/tempStore.ts";

const stores = tempStores();

interface UserModel {
  text: string;
  note: string;
}

describe("kv namespaces", () => {
  it("get, put, delete, and persist across a reopen", async () => {
    const first = stores.open();
    const models = first.kv<UserModel>("samantha", "userModels");
    expect(models.get(["ada", 1])).toBeUndefined();
    await models.put(["ada", 1], { text: "likes tea", note: "first meeting" });
    expect(models.get(["ada", 1])).toEqual({ text: "likes tea", note: "first meeting" });
    await models.put("single-part", { text: "x", note: "y" });
    expect(await models.delete("single-part")).toBe(true);
    expect(await models.delete("single-part")).toBe(false);
    await first.close();

    const reopened = stores.open().kv<UserModel>("samantha", "userModels");
    expect(reopened.get(["ada", 1])).toEqual({ text: "likes tea", note: "first meeting" });
    expect(reopened.get("single-part")).toBeUndefined();
  });

  it("ranges by prefix in key order, and the latest version is a reversed range of one", async () => {
    const models = stores.open().kv<string>("samantha", "userModels");
    for (const v of [3, 1, 10, 2]) await models.put(["ada", v], `ada v${v}`);
    await models.put(["adam", 1], "adam v1"); // shares a string prefix with "ada", not a key prefix
    await models.put(["bob", 1], "bob v1");
    expect(models.range({ prefix: "ada" }).map((e) => e.key)).toEqual([["ada", 1], ["ada", 2], ["ada", 3], ["ada", 10]]);
    expect(models.range({ prefix: ["ada"], reverse: true, limit: 1 })).toEqual([{ key: ["ada", 10], value: "ada v10" }]);
    expect(models.range().map((e) => e.value)).toEqual(["ada v1", "ada v2", "ada v3", "ada v10", "adam v1", "bob v1"]);
    expect(models.range({ start: ["ada", 2], end: ["ada", 10] }).map((e) => e.value)).toEqual(["ada v2", "ada v3"]);
    expect(models.range({ start: ["ada", 2], end: ["ada", 10], reverse: true }).map((e) => e.value)).toEqual(["ada v3", "ada v2"]);
    expect(models.range({ limit: 0 })).toEqual([]);
  });

  it("keeps namespaces and actors apart", async () => {
    const store = stores.open();
    await store.kv("a", "one").put("k", "a/one");
    await store.kv("a", "two").put("k", "a/two");
    await store.kv("b", "one").put("k", "b/one");
    expect(store.kv("a", "one").range()).toEqual([{ key: ["k"], value: "a/one" }]);
    expect(store.kv("a", "two").get("k")).toBe("a/two");
    expect(store.kv("b", "one").get("k")).toBe("b/one");
    // kv values are not state: these actors have none.
    expect(store.actorIds()).toEqual([]);
  });

  it("refuses bad keys and values that cannot be encoded, writing nothing", async () => {
    const ns = stores.open().kv("a", "ns");
    await expect(ns.put([], 1)).rejects.toThrow(/at least one part/);
    await expect(ns.put(["a\u0000"], 1)).rejects.toThrow(/control characters/);
    await expect(ns.put([Number.NaN], 1)).rejects.toThrow(/must be finite/);
    await expect(ns.put(["k"], 2n ** 70n)).rejects.toThrow(StoreError);
    expect(ns.range()).toEqual([]);
  });
});
