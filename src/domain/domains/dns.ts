/**
 * Asking DNS for a domain's verification record (docs/domains.md#verify-your-domain): a
 * `node:dns` Resolver on SERVICE_DNS_SERVERS (default: the system's resolvers), one try with a
 * 5 s timeout, and a hard 5 s limit on the whole question, so a slow server never holds a
 * request longer. What came back is told as a sentence, never thrown.
 */
import { Resolver } from 'node:dns/promises';

/** The whole question's limit. */
export const DNS_TIMEOUT_MS = 5_000;

export type TxtAnswer =
  | { readonly kind: 'records'; readonly values: readonly string[] }
  | { readonly kind: 'nxdomain' | 'nodata' | 'servfail' | 'refused' | 'timeout' | 'error'; readonly code: string };

/** Asks for TXT records of `name`. */
export type TxtLookup = (name: string) => Promise<TxtAnswer>;

/** A lookup through `servers` (`host[:port]`, as node:dns `setServers` takes them; empty: the system's). */
export function txtLookup(servers: readonly string[]): TxtLookup {
  return async (name) => {
    const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
    if (servers.length > 0) resolver.setServers([...servers]);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<TxtAnswer>((resolve) => {
      timer = setTimeout(() => {
        resolver.cancel();
        resolve({ kind: 'timeout', code: 'ETIMEOUT' });
      }, DNS_TIMEOUT_MS);
    });
    const asked = resolver.resolveTxt(name).then(
      (chunks): TxtAnswer => ({ kind: 'records', values: chunks.map((c) => c.join('')) }),
      (err: NodeJS.ErrnoException): TxtAnswer => answerOfError(err.code ?? 'EUNKNOWN'),
    );
    try {
      return await Promise.race([asked, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

function answerOfError(code: string): TxtAnswer {
  switch (code) {
    case 'ENOTFOUND':
      return { kind: 'nxdomain', code };
    case 'ENODATA':
      return { kind: 'nodata', code };
    case 'ESERVFAIL':
      return { kind: 'servfail', code };
    case 'EREFUSED':
      return { kind: 'refused', code };
    case 'ETIMEOUT':
    case 'ECANCELLED':
      return { kind: 'timeout', code };
    default:
      return { kind: 'error', code };
  }
}

/** What the answer found, as the 409 and the re-check's log tell it. */
export function describeAnswer(a: TxtAnswer): string {
  switch (a.kind) {
    case 'records':
      return a.values.length === 0 ? 'no TXT record' : `other values: ${a.values.slice(0, 5).map((v) => JSON.stringify(v.slice(0, 200))).join(', ')}${a.values.length > 5 ? ` and ${a.values.length - 5} more` : ''}`;
    case 'nxdomain':
      return 'nothing: the name does not exist (NXDOMAIN)';
    case 'nodata':
      return 'no TXT record at that name (NODATA)';
    case 'servfail':
      return 'a DNS error: the server failed (SERVFAIL)';
    case 'refused':
      return 'a DNS error: the server refused the query (REFUSED)';
    case 'timeout':
      return `no answer within ${DNS_TIMEOUT_MS / 1000} s (timeout)`;
    case 'error':
      return `a DNS error (${a.code})`;
  }
}

/** True when the answer is definite: the record is not there (an error or a timeout says nothing). */
export function isDefiniteMiss(a: TxtAnswer, value: string): boolean {
  if (a.kind === 'records') return !a.values.includes(value);
  return a.kind === 'nxdomain' || a.kind === 'nodata';
}
