/**
 * tenantctl's output rules: colour only on a terminal without NO_COLOR, tables that stay
 * aligned whether or not they are coloured, and a reader that closes the pipe early ending it
 * quietly.
 */
import { spawn } from 'node:child_process';
import { renderTable, styleFor } from '../../src/cli/output';
import { CliError, reportFailure } from '../../src/cli/errors';
import { CLI, ROOT } from '../helpers/cli';
import { buildOnce } from '../helpers/server-process';

const tty = { write: () => undefined, isTTY: true };
const pipe = { write: () => undefined, isTTY: false };
const rows = [
  { a: 'x', n: 1 },
  { a: 'longer', n: 100 },
];
const columns = [
  { header: 'NAME', value: (r: { a: string }) => r.a },
  { header: 'N', value: (r: { n: number }) => String(r.n), right: true },
];
// eslint-disable-next-line no-control-regex
const strip = (s: string) => s.replace(/\u001b\[\d+m/g, '');

it('colours only a terminal without NO_COLOR', () => {
  expect(styleFor(tty, false).red('x')).toBe('\u001b[31mx\u001b[39m');
  expect(styleFor(tty, true).red('x')).toBe('x');
  expect(styleFor(pipe, false).red('x')).toBe('x');
});

it('aligns columns (numbers right-aligned), with or without colour', () => {
  const plain = renderTable(rows, columns);
  expect(plain).toBe('NAME      N\nx         1\nlonger  100\n');
  expect(strip(renderTable(rows, columns, styleFor(tty, false)))).toBe(plain);
});

it('keeps control characters from data out of the table', () => {
  expect(renderTable([{ a: 'evil\nrow\u001b[31m', n: 1 }], columns)).toBe('NAME           N\nevil row [31m  1\n');
});

it('prints errors in red on a terminal, plain with NO_COLOR or on a pipe', () => {
  const capture = (isTTY: boolean) => {
    let text = '';
    return { out: { write: (s: string) => void (text += s), isTTY }, text: () => text };
  };
  for (const [isTTY, noColor, coloured] of [
    [true, false, true],
    [true, true, false],
    [false, false, false],
  ] as const) {
    const err = capture(isTTY);
    expect(reportFailure(new CliError('no local signing key', 2), err.out, noColor)).toBe(2);
    expect(err.text()).toBe(coloured ? '\u001b[31merror:\u001b[39m no local signing key\n' : 'error: no local signing key\n');
  }
  const other = capture(false);
  expect(reportFailure(new Error('boom'), other.out, false)).toBe(2);
  expect(other.text()).toBe('error: boom\n');
});

it('a closed stdout (`tenantctl --help | head -1`) ends the built CLI quietly: status 141, nothing on stderr', async () => {
  await buildOnce();
  for (const args of [['--help'], ['tenant', '--help']]) {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // The reader goes away before tenantctl writes a byte: its first write meets a closed pipe.
    proc.stdout.destroy();
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => proc.on('close', (c) => resolve(c)));
    expect({ args, code, stderr }).toEqual({ args, code: 141, stderr: '' });
  }
}, 300_000);
