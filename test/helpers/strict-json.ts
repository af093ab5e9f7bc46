/**
 * Checks one log line: exactly one JSON object and no key twice in any object. JSON.parse keeps
 * the last of two equal keys silently (and so would jq), so it cannot see the fault; this small
 * recursive-descent reader does. Returns a sentence describing the problem, or null.
 */
export function logLineProblem(line: string): string | null {
  let pos = 0;
  const ws = () => {
    while (pos < line.length && ' \t\r\n'.includes(line[pos]!)) pos++;
  };
  const fail = (why: string): never => {
    throw new Error(`${why} at column ${pos + 1}`);
  };
  const string = (): string => {
    if (line[pos] !== '"') fail('expected a string');
    const start = pos;
    pos++;
    while (pos < line.length && line[pos] !== '"') {
      if (line[pos] === '\\') pos++;
      else if (line.charCodeAt(pos) < 0x20) fail('control character in a string');
      pos++;
    }
    if (line[pos] !== '"') fail('unterminated string');
    pos++;
    return JSON.parse(line.slice(start, pos)) as string;
  };
  const value = (path: string): void => {
    ws();
    const c = line[pos];
    if (c === '{') {
      pos++;
      const keys = new Set<string>();
      ws();
      if (line[pos] === '}') {
        pos++;
        return;
      }
      for (;;) {
        ws();
        const key = string();
        if (keys.has(key)) fail(`duplicate key "${key}" in ${path || 'the top-level object'}`);
        keys.add(key);
        ws();
        if (line[pos] !== ':') fail('expected :');
        pos++;
        value(path ? `${path}.${key}` : key);
        ws();
        if (line[pos] === ',') {
          pos++;
          continue;
        }
        if (line[pos] === '}') {
          pos++;
          return;
        }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      pos++;
      ws();
      if (line[pos] === ']') {
        pos++;
        return;
      }
      for (let i = 0; ; i++) {
        value(`${path}[${i}]`);
        ws();
        if (line[pos] === ',') {
          pos++;
          continue;
        }
        if (line[pos] === ']') {
          pos++;
          return;
        }
        fail('expected , or ]');
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const m = /^(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(line.slice(pos));
    if (!m) fail('expected a value');
    pos += m![0].length;
  };
  try {
    ws();
    if (line[pos] !== '{') return `not a JSON object: ${JSON.stringify(line.slice(0, 160))}`;
    value('');
    ws();
    if (pos !== line.length) fail('text after the object');
    return null;
  } catch (err) {
    return `${(err as Error).message}: ${JSON.stringify(line.slice(0, 300))}`;
  }
}

/** Splits raw output into lines and returns one problem per bad line (empty when all are clean). */
export function logProblems(raw: string): string[] {
  return raw
    .split('\n')
    .filter((l) => l.length > 0)
    .map(logLineProblem)
    .filter((p): p is string => p !== null);
}
