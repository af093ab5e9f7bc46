/**
 * Human output for tenantctl: aligned tables and optional colour. Colour only when the stream
 * is a terminal and NO_COLOR is unset (https://no-color.org), so pipes and files get plain text.
 */

export interface Out {
  write(text: string): void;
  readonly isTTY: boolean;
}

export interface Style {
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  dim(s: string): string;
}

const plain: Style = { bold: (s) => s, red: (s) => s, green: (s) => s, dim: (s) => s };
const ansi = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
const coloured: Style = { bold: ansi(1, 22), red: ansi(31, 39), green: ansi(32, 39), dim: ansi(2, 22) };

/** The style for a stream: colour only on a terminal without NO_COLOR. */
export function styleFor(out: Out, noColor: boolean): Style {
  return out.isTTY && !noColor ? coloured : plain;
}

export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => string;
  /** Right-align (numbers). */
  readonly right?: boolean;
}

/**
 * Renders rows as an aligned table: a header line, then one line per row, columns separated by
 * two spaces. Widths are measured before styling so escape codes never break alignment.
 */
export function renderTable<T>(rows: readonly T[], columns: ReadonlyArray<Column<T>>, style: Style = plain): string {
  const cells = rows.map((r) => columns.map((c) => oneLine(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[], decorate: (s: string) => string = (s) => s) =>
    values
      .map((v, i) => {
        const padded = columns[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!);
        return decorate(padded);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header), style.bold), ...cells.map((row) => line(row))].join('\n') + '\n';
}

/** Key/value lines, keys aligned. */
export function renderPairs(pairs: ReadonlyArray<readonly [string, string]>, style: Style = plain): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${style.bold(k.padEnd(width))}  ${oneLine(v)}`).join('\n') + '\n';
}

/** Table cells are single lines: control characters from server data cannot break the layout. */
function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}
