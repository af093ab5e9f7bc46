/**
 * How the service compares email addresses (docs/tenants.md#invitations-and-membership-in-detail):
 * trimmed, Unicode NFKC, case-folded. Addresses are stored trimmed (as given otherwise); the key is
 * only for comparing.
 */

/** The comparison key of an email address. */
export function emailKey(email: string): string {
  return email.trim().normalize('NFKC').toLowerCase();
}

/** True when two addresses are the same after trimming, NFKC and case folding. */
export function sameEmail(a: string, b: string): boolean {
  return emailKey(a) === emailKey(b);
}
