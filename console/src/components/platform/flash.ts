/**
 * A one-time notice carried across a navigation inside this tab ("Tenant … deleted." shown on the
 * list the delete returns to). Kept in memory only: a reload does not show it again.
 */
let pending: string | null = null;

export function setFlash(message: string): void {
  pending = message;
}

/** The notice left for the next page, once; null when there is none. */
export function takeFlash(): string | null {
  const m = pending;
  pending = null;
  return m;
}
