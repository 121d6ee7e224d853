/**
 * "The soul is thinking" on Discord: a typing indicator. Discord shows one for about ten
 * seconds, or until the bot posts, so it is sent again every few seconds while any message in
 * the channel is being thought about, and simply no longer sent once none is.
 */

/** Under Discord's ~10 s, so the indicator does not flicker off between two sends. */
export const TYPING_REPEAT_MS = 8_000;

interface Typing {
  /** Perceptions in the channel being thought about. */
  count: number;
  timer: ReturnType<typeof setInterval>;
}

export class TypingIndicator {
  readonly #channels = new Map<string, Typing>();

  constructor(
    private readonly send: (channel: string) => Promise<void>,
    private readonly report: (err: unknown, what: string) => void,
    private readonly repeatMs = TYPING_REPEAT_MS,
  ) {}

  /** Starts (or keeps) the indicator in `channel`; resolves once the first one was sent. */
  async start(channel: string): Promise<void> {
    const typing = this.#channels.get(channel);
    if (typing) {
      typing.count++;
      return;
    }
    const timer = setInterval(() => this.send(channel).catch((err: unknown) => this.report(err, `showing typing in ${channel}`)), this.repeatMs);
    timer.unref?.();
    this.#channels.set(channel, { count: 1, timer });
    await this.send(channel);
  }

  /** One thought in `channel` is over; the indicator stops with the last. */
  stop(channel: string): void {
    const typing = this.#channels.get(channel);
    if (!typing || --typing.count > 0) return;
    clearInterval(typing.timer);
    this.#channels.delete(channel);
  }

  close(): void {
    for (const { timer } of this.#channels.values()) clearInterval(timer);
    this.#channels.clear();
  }
}
