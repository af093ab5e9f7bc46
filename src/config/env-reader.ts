/**
 * Reads variables from one environment and collects every problem instead of stopping at the
 * first, so a bad boot names them all in one message (docs/configuration.md).
 */

export type Env = Readonly<Record<string, string | undefined>>;

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);
/** A tenant slug, as SERVICE_DEFAULT_TENANT_SLUG and SERVICE_RESERVED_SLUGS spell them. */
export const SLUG = /^[a-z0-9-]+$/;
/** A claim name or a dot path into nested claims. */
export const CLAIM_PATH = /^[^.]+(\.[^.]+)*$/;

/** Typed readers over one environment; each bad value adds a line to `problems` and yields the default. */
export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** The value as written, untrimmed (a key prefix may end in white space on purpose). */
  exact(name: string): string | undefined {
    return this.env[name];
  }

  /** The trimmed value; unset or blank: undefined. */
  text(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  str(name: string): string | null {
    return this.text(name) ?? null;
  }

  bool(name: string, dflt: boolean): boolean {
    const v = this.text(name);
    if (v === undefined) return dflt;
    const lower = v.toLowerCase();
    if (TRUE.has(lower)) return true;
    if (FALSE.has(lower)) return false;
    this.problems.push(`${name}: expected true/false/1/0/yes/no, got '${v}'`);
    return dflt;
  }

  /** An integer in [min, max]; unset or `null`: null. */
  int(name: string, min: number, max: number): number | null {
    const v = this.text(name);
    if (v === undefined || v.toLowerCase() === 'null') return null;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      this.problems.push(`${name}: expected an integer from ${min} to ${max}, got '${v}'`);
      return null;
    }
    return Number(v);
  }

  /** A URL of one of `protocols`; a bad one is reported without its password. */
  url(name: string, protocols: readonly string[]): string | null {
    const v = this.text(name);
    if (v === undefined) return null;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return v;
    } catch {
      this.problems.push(`${name}: expected a ${protocols.join(' or ')} URL, got '${redactUrl(v)}'`);
      return null;
    }
  }

  /** Domain names, comma-separated or a JSON array, lower-cased; unset, `null` or empty: null. */
  domains(name: string): string[] | null {
    const v = this.text(name);
    if (v === undefined || v.toLowerCase() === 'null') return null;
    let items: unknown;
    if (v.startsWith('[')) {
      try {
        items = JSON.parse(v);
      } catch {
        this.problems.push(`${name}: not a valid JSON array`);
        return null;
      }
      if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) {
        this.problems.push(`${name}: the JSON value must be an array of strings`);
        return null;
      }
    } else {
      items = v.split(',');
    }
    const out = (items as string[]).map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
    for (const d of out) {
      if (!/^[a-z0-9.-]+$/.test(d) || !d.includes('.')) this.problems.push(`${name}: '${d}' is not a domain name`);
    }
    return out.length ? out : null;
  }

  /** Whether a problem was already reported for `name` (a "required" line would repeat it). */
  reported(name: string): boolean {
    return this.problems.some((p) => p.startsWith(name));
  }
}

/** Hides the password of a URL so it can be logged or put in an error message. */
export function redactUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return value.replace(/\/\/([^:/@]+):[^@]+@/, '//$1:***@');
  }
}
