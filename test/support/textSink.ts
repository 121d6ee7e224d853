import { Writable } from "node:stream";

/** A Writable that keeps what is written to it, for a command's `stdout`/`out` in process. */
export function textSink(): Writable & { text: () => string } {
  let text = "";
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return Object.assign(out, { text: () => text });
}
