import { expect, it } from "vitest";
import { RecentIds } from "../../../bridges/http/RecentIds.ts";

it("keeps the most recently added ids only, so a long-lived WebSocket's set stays bounded", () => {
  const ids = new RecentIds(3);
  for (let n = 1; n <= 10_000; n++) ids.add(`p${n}`);
  expect(ids.size).toBe(3);
  expect(["p9998", "p9999", "p10000"].every((id) => ids.has(id))).toBe(true);
  expect(ids.has("p9997")).toBe(false);
  // Adding again makes an id the newest: it outlives those added before it.
  ids.add("p9998");
  ids.add("p10001");
  expect(ids.has("p9998")).toBe(true);
  expect(ids.has("p9999")).toBe(false);
});
