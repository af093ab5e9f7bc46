/** The mistakes a form found before sending anything, each a sentence; nothing when there are none. */
export function Problems({ list }: { list: readonly string[] }) {
  if (!list.length) return null;
  return (
    <div className="notice notice-error" role="alert">
      {list.map((p) => (
        <p key={p}>{p}</p>
      ))}
    </div>
  );
}
