/**
 * A request listener that nothing escapes: whatever the handler throws, or rejects with, is
 * reported (with the method and the path, never the query, which may hold a token) and answered
 * 500; a response whose client is gone and is still written to is let be. An exception out of
 * a listener would end the process, and every server of a node shares it.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { sendJson } from "./httpJson.ts";

export function guardedListener(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, onError: (err: unknown, what: string) => void): RequestListener {
  return (req, res) => {
    const failed = (err: unknown) => {
      onError(err, `${req.method} ${String(req.url).split("?")[0]?.slice(0, 200)}`);
      sendJson(res, 500, { error: "internal error" }, true);
    };
    res.on("error", () => undefined);
    try {
      handle(req, res).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}
