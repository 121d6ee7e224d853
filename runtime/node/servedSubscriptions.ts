/**
 * Actors a node serves on queue-group subscriptions (skill gates, tool actors) are confirmed
 * by the bus before the node says it is ready. NATS refuses a subscription the node's user may
 * not make only after the fact (a permissions violation after the SUB), so a node that did not
 * wait would be "ready" while those requests went unanswered. A refusal stops every one of
 * them and the start, saying what to grant.
 */
export interface ServedSubscription {
  readonly subject: string;
  ready(): Promise<void>;
  stop(): Promise<void>;
}

export async function confirmServed<H extends ServedSubscription>(handles: readonly H[], refusal: (handle: H) => { what: string; queue: string; grant: string }, nodeId: string): Promise<void> {
  const outcomes = await Promise.allSettled(handles.map((h) => h.ready()));
  const refused = outcomes.findIndex((r) => r.status === "rejected");
  if (refused < 0) return;
  await Promise.allSettled(handles.map((h) => h.stop()));
  const handle = handles[refused] as H;
  const reason = (outcomes[refused] as PromiseRejectedResult).reason;
  const { what, queue, grant } = refusal(handle);
  throw new Error(
    `node ${nodeId} cannot serve ${what}: ${reason instanceof Error ? reason.message : String(reason)}; ` +
      `its NATS user needs permission to subscribe to ${handle.subject} in queue group '${queue}' (\`ensoul nats-config --user <user>:role=node:${grant}\` grants it)`,
  );
}
