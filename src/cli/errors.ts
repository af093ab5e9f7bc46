/**
 * tenantctl's failures: one error type carrying its exit status, and the one way they are
 * printed (`error: <message>` on stderr, red only on a terminal without NO_COLOR).
 */
import { styleFor, type Out } from './output';

/** Exit statuses: 1 the server refused the request (or, for audit, violations); 2 usage or connection errors. */
export const EXIT_REFUSED = 1;
export const EXIT_ERROR = 2;

/** A failure to report on stderr as `error: <message>` with an exit status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_ERROR,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Prints a failure on `stderr` and returns its exit status (2 for anything unexpected). */
export function reportFailure(err: unknown, stderr: Out, noColor: boolean): number {
  const label = styleFor(stderr, noColor).red('error:');
  if (err instanceof CliError) {
    stderr.write(`${label} ${err.message}\n`);
    return err.exitCode;
  }
  stderr.write(`${label} ${(err as Error)?.message ?? String(err)}\n`);
  return EXIT_ERROR;
}
