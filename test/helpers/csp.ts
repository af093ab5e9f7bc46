/** A Content-Security-Policy header as a map of directive → value (for comparing pages' policies). */
export function cspDirectives(header: string | undefined): Map<string, string> {
  expect(header).toBeDefined();
  return new Map(
    header!
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        const [name, ...rest] = d.split(/\s+/);
        return [name, rest.join(' ')] as [string, string];
      }),
  );
}
