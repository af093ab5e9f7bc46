#!/usr/bin/env node
/**
 * tenantctl entry point (package.json "bin"). The only place the CLI touches process state:
 * argv, the standard streams (stdin to ask for a confirmation or to read an import), NO_COLOR and
 * the exit status.
 */
import readline from 'node:readline/promises';
import { runCli } from './program';

// A reader that stops early (`tenantctl --help | head -1`) closes the pipe: end quietly, with the
// status of a Unix tool stopped by SIGPIPE (128 + 13), instead of an unhandled EPIPE and its stack.
const EXIT_CLOSED_PIPE = 141;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT_CLOSED_PIPE);
    throw err;
  });
}

const stdout = { write: (s: string) => void process.stdout.write(s), isTTY: Boolean(process.stdout.isTTY) };
const stderr = { write: (s: string) => void process.stderr.write(s), isTTY: Boolean(process.stderr.isTTY) };

// Questions go to stderr, so stdout stays the command's output (JSON included).
const prompt =
  process.stdin.isTTY && process.stderr.isTTY
    ? async (question: string): Promise<string> => {
        const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
        try {
          return await rl.question(question);
        } catch {
          // End of input (Ctrl-D) answers nothing: the command treats it as a cancel.
          return '';
        } finally {
          rl.close();
        }
      }
    : undefined;

runCli(process.argv, { stdout, stderr, noColor: (process.env.NO_COLOR ?? '') !== '', prompt, streams: { stdin: process.stdin, stdout: process.stdout } })
  .then((code) => {
    // exitCode, not exit(): let stdout drain when it is a pipe.
    process.exitCode = code;
  })
  .catch((err: unknown) => {
    process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 2;
  });
