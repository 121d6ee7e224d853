/**
 * The cluster the HTTP fuzz runs in a child `ensoul up`: `echo` behind an HTTP bridge on
 * ENSOUL_TEST_HTTP_PORT, and `fragile` beside it on the same port, a soul whose process leaves
 * an error nothing catches when told to (`throw later`: from a timer; `reject later`: a
 * rejection nobody handles), as a blueprint with a bug would.
 */
import { defineSoul, useActions, usePerceptions, type MentalProcess } from "../../../actors/soul/index.ts";
import { echoSoul } from "../cluster/blueprints.ts";

const fragile: MentalProcess = async ({ workingMemory }) => {
  const { content } = usePerceptions().invokingPerception;
  if (content === "throw later") {
    setTimeout(() => {
      throw new Error("fragile: thrown from a timer nobody catches");
    }, 0);
  }
  if (content === "reject later") void Promise.reject(new Error("fragile: a rejection nobody handles"));
  useActions().speak(`fragile: ${content}`);
  return workingMemory;
};

const fragileSoul = defineSoul({ name: "Fragile", persona: "A soul with a bug in it.", initialProcess: fragile, processes: { fragile } });

const port = Number(process.env.ENSOUL_TEST_HTTP_PORT);
// Floods are the fuzz's business here, not the rate limiter's: it would answer most of them 429 before they reach anything.
const rateLimit = { perMinute: 600_000, burst: 100_000 };

export default {
  cluster: "fuzz",
  souls: [
    { id: "echo", blueprint: echoSoul },
    { id: "fragile", blueprint: fragileSoul },
  ],
  bridges: [
    { type: "http", soul: "echo", options: { port, rateLimit, maxBodyBytes: 8192 } },
    { type: "http", soul: "fragile", options: { port, rateLimit, maxBodyBytes: 8192 } },
  ],
  runtime: { passivateAfterMs: 0 },
};
