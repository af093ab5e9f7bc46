/**
 * Verified bearer tokens, remembered until they expire: a token seen again (the same bytes,
 * signature included) skips the signature check and the claim checks it already passed. An
 * RS256 check and the decoding around it are the largest part of what a request costs this
 * service besides the database (about 60–80 µs of CPU); a client sends the same token for
 * minutes.
 *
 * Nothing about what is accepted changes:
 * - only a token that passed every check is stored, under its exact text, so no other text can
 *   match an entry;
 * - an entry is valid exactly while the token is (`exp` plus the same clock tolerance as the
 *   verifier, whole seconds as jsonwebtoken counts them);
 * - an entry belongs to the verification keys it was checked with: when the key set changes
 *   (a JWKS refetch or refresh), every entry is checked again on its next use, so a key the
 *   identity provider withdrew stops being trusted exactly when it would without the cache.
 *
 * Bounded by entries and by bytes of token text; the oldest entries go first. SERVICE_JWT_CACHE_SIZE
 * sizes it (10 000 by default; 0 verifies every token on every request).
 */
import type { Caller } from '../context/claims';

interface Entry {
  readonly caller: Caller;
  /** Valid while the current whole second is below this (exp + tolerance). */
  readonly validUntilSec: number;
  /** The key-set generation the token was verified with. */
  readonly generation: number;
}

/** Total bytes of token text kept at most (tokens are ~1 KB; headers allow up to 16 KB). */
const MAX_BYTES = 8 * 1024 * 1024;

export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly toleranceSec: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The caller of a token verified with key-set `generation` and not yet expired; else null. */
  get(token: string, generation: number): Caller | null {
    const entry = this.entries.get(token);
    if (!entry) return null;
    if (entry.generation !== generation || Math.floor(this.nowMs() / 1000) >= entry.validUntilSec) {
      this.remove(token);
      return null;
    }
    return entry.caller;
  }

  /** Remembers a token that passed every check, with its `exp` (seconds). */
  set(token: string, caller: Caller, expSec: number, generation: number): void {
    if (this.maxEntries <= 0 || token.length > MAX_BYTES / 64) return;
    this.remove(token);
    this.entries.set(token, { caller, validUntilSec: expSec + this.toleranceSec, generation });
    this.bytes += token.length;
    while (this.entries.size > this.maxEntries || this.bytes > MAX_BYTES) {
      const oldest = this.entries.keys().next().value as string;
      this.remove(oldest);
    }
  }

  private remove(token: string): void {
    if (this.entries.delete(token)) this.bytes -= token.length;
  }
}
