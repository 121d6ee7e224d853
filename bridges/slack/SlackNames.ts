/**
 * People's display names for perceptions: Slack events carry only a user id, so each is looked
 * up once with users.info (display name, else real name, else handle) and kept for an hour. A
 * lookup Slack refuses (no users:read scope, an unknown user, a rate limit) falls back to the
 * id, remembered for a few minutes so a busy channel does not ask again for every message.
 */
import { slackCall, type SlackClient } from "./slackApi.ts";

const KEEP_MS = 3600_000;
const KEEP_FALLBACK_MS = 5 * 60_000;
const MAX_ENTRIES = 10_000;

interface Profile {
  name?: string;
  real_name?: string;
  profile?: { display_name?: string; real_name?: string };
}

function nameOf(user: Profile | undefined): string | undefined {
  const candidates = [user?.profile?.display_name, user?.profile?.real_name, user?.real_name, user?.name];
  return candidates.find((c): c is string => typeof c === "string" && c.trim().length > 0)?.trim();
}

export class SlackNames {
  readonly #cache = new Map<string, { name: string; until: number }>();

  constructor(
    private readonly client: SlackClient,
    private readonly now: () => number = Date.now,
  ) {}

  async of(userId: string): Promise<string> {
    const cached = this.#cache.get(userId);
    if (cached && cached.until > this.now()) return cached.name;
    let name: string | undefined;
    try {
      const result = await slackCall("users.info", () => this.client.users.info({ user: userId }));
      name = nameOf(result.user as Profile | undefined);
    } catch {
      name = undefined;
    }
    this.#remember(userId, name ?? userId, name ? KEEP_MS : KEEP_FALLBACK_MS);
    return name ?? userId;
  }

  #remember(userId: string, name: string, forMs: number): void {
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.delete(userId);
    this.#cache.set(userId, { name, until: this.now() + forMs });
  }
}
