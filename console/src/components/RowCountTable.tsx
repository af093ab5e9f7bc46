/** Numbers as the console prints them (1,000 rather than 1000). */
export const count = new Intl.NumberFormat('en');

/**
 * Rows per table (the deletion preview, the isolation audit): one row per table, sorted by name,
 * with an optional total in the footer.
 */
export function RowCountTable({ caption, rows, total }: { caption: string; rows: Iterable<[string, number]>; total?: number }) {
  const sorted = [...rows].sort(([a], [b]) => a.localeCompare(b));
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Table</th>
          <th scope="col" className="num">
            Rows
          </th>
        </tr>
      </thead>
      <tbody>
        {sorted.map(([table, n]) => (
          <tr key={table}>
            <td>
              <code>{table}</code>
            </td>
            <td className="num">{count.format(n)}</td>
          </tr>
        ))}
      </tbody>
      {total !== undefined ? (
        <tfoot>
          <tr>
            <th scope="row">In all</th>
            <td className="num">{count.format(total)}</td>
          </tr>
        </tfoot>
      ) : null}
    </table>
  );
}
