/**
 * When a soul's tool-call records may go (actors/tool ToolCallLedger.ts). A record exists so
 * that a turn run again after a crash does not blindly repeat a non-idempotent call; a turn
 * runs again only while its perception is pending in the inbox. So:
 *
 * - after a commit, the records of that turn and every earlier one go: the commit marked the
 *   perception done in the same transaction, so nothing runs those turns again. Pruning after
 *   the commit, not in its transaction, keeps the ledger out of the store's commit; a crash
 *   between the two leaves a stray record of a committed turn, which the next commit removes
 *   (it prunes by turn number, not by the last turn alone).
 * - after a failed turn whose perception is set aside with its error, that turn's records go
 *   too: nothing runs that turn again. (Its calls' ids name its perception, so the next
 *   perception's turn, which gets the same turn id, could not mistake them for its own anyway;
 *   the next commit would prune them by their turn number.) A perception left pending (a full
 *   store) keeps them: its turn runs again.
 *
 * A later turn's records (the one in flight while a whisper commits, say) are never touched.
 * The prune does not hold up the turn, and a failed prune loses nothing the next one won't do.
 */
import { ledgerOf } from "../tool/index.ts";
import type { SoulServices } from "./SoulServices.ts";

export function pruneToolCalls(soul: { readonly store: object; readonly services: SoulServices }, throughTurn: number): void {
  // A soul without tools made no calls (and pays nothing for the read).
  if (!soul.services.tools) return;
  ledgerOf(soul.store)
    .prune(throughTurn)
    .catch(() => undefined);
}
