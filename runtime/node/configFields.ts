/**
 * The field schemas every section of the cluster config shares: a token (ids of souls, nodes,
 * clusters, skills) and a `provider:model` name.
 *
 * They live apart so the soul, daimon and gate sections check ids and model names the same way.
 */
import { z } from "zod";
import { parseModelName } from "../providers/index.ts";

const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;
export const token = z.string().regex(TOKEN, "may contain only A-Z a-z 0-9 _ - (1 to 128 characters)");

export const modelName = z.string().superRefine((value, ctx) => {
  try {
    parseModelName(value);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
  }
});
