/**
 * Waiting for a condition instead of for luck: what another process writes (a log line, a file,
 * a metric, a row) arrives after the request that caused it has been answered, later on a busy
 * machine. `waitFor` polls until the condition holds and fails, naming what it waited for and
 * what it last saw, when a bound passes; the bound only guards against a hang (it is never a
 * timing assertion, so it is generous).
 */
import fs from 'node:fs';

export interface WaitOptions {
  /** How long to keep trying before failing; default 15 s. */
  boundMs?: number;
  /** Pause between attempts; default 50 ms. */
  everyMs?: number;
}

/**
 * Calls `probe` until it returns something other than undefined/false and returns that; a probe
 * that throws counts as "not yet" (its last error is reported when the bound passes).
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, options: WaitOptions = {}): Promise<T> {
  const boundMs = options.boundMs ?? 15_000;
  const everyMs = options.everyMs ?? 50;
  const deadline = Date.now() + boundMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`still waiting, after ${boundMs} ms, for ${what} (last: ${seen})`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The file's text once it contains `needle` (a missing file counts as "not yet"). */
export function waitForFileContaining(file: string, needle: string, options?: WaitOptions): Promise<string> {
  return waitFor(`${file} to contain ${JSON.stringify(needle)}`, () => {
    const text = fs.readFileSync(file, 'utf8');
    return text.includes(needle) ? text : undefined;
  }, options);
}
