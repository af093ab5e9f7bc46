/** A timestamp in the reader's locale, with the exact ISO value as its machine-readable form. */
export function Time({ value }: { value: string | null | undefined }) {
  if (!value) return <span>never</span>;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return <span>{value}</span>;
  return <time dateTime={value}>{d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>;
}
