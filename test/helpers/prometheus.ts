/**
 * A strict parser of the Prometheus text exposition format 0.0.4, written from the format's
 * description (not prom-client's code), so a malformed scrape fails the test that reads it:
 * - a line is blank, `# HELP <name> <text>`, `# TYPE <name> <type>`, another `#` comment, or a
 *   sample `name{label="value",…} value [timestamp]`;
 * - names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* (not `__`-prefixed),
 *   label values are quoted with only \\, \" and \n escapes; values are what Prometheus itself
 *   parses (parseSampleValue: floats, NaN and ±Inf in any case);
 * - HELP and TYPE at most once per family, TYPE before the family's first sample; a family's
 *   samples are contiguous; no series (name + label set) twice; no label twice in one sample;
 * - histograms: `_bucket` series carry `le`, counts never decrease with `le`, the `+Inf` bucket
 *   exists and equals `_count`, and `_sum` is present; counters are never negative.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | null;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {}

function fail(lineNo: number, line: string, why: string): never {
  throw new ExpositionError(`line ${lineNo}: ${why}: ${JSON.stringify(line.slice(0, 200))}`);
}

/**
 * A sample value as Prometheus reads it: Go's strconv.ParseFloat without the Go 1.13 additions
 * (hexadecimal mantissas, `p` exponents, `_` separators), which Prometheus's text parser refuses.
 * ParseFloat ignores case in NaN, Inf and Infinity (prom-client prints `Nan` for a gauge with no
 * sample yet), lets Inf and Infinity carry a sign but not NaN, and refuses a decimal beyond the
 * float64 range.
 */
export function parseSampleValue(raw: string): number | undefined {
  if (/^nan$/i.test(raw)) return NaN;
  const inf = /^([+-]?)inf(inity)?$/i.exec(raw);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

function parseValue(raw: string, lineNo: number, line: string): number {
  const value = parseSampleValue(raw);
  if (value === undefined) fail(lineNo, line, `bad value '${raw}'`);
  return value;
}

/** The family a sample name belongs to, given the declared types (histogram/summary suffixes). */
function familyOf(sampleName: string, types: Map<string, Family['type']>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (sampleName.endsWith(suffix)) {
      const base = sampleName.slice(0, -suffix.length);
      const t = types.get(base);
      if (t === 'histogram' || (t === 'summary' && suffix !== '_bucket')) return base;
    }
  }
  return sampleName;
}

/** Parses a scrape; throws ExpositionError naming the first offending line. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const types = new Map<string, Family['type']>();
  const closed = new Set<string>();
  const seenSeries = new Set<string>();
  let current: string | null = null;
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError('the exposition does not end with a newline');
  const lines = text.split('\n');
  lines.pop();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: types.get(name) ?? 'untyped', help: null, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  lines.forEach((line, i) => {
    const lineNo = i + 1;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string | undefined];
      if (!NAME.test(name)) fail(lineNo, line, 'bad metric name');
      if (closed.has(name)) fail(lineNo, line, `${kind} after the samples of ${name} ended`);
      const f = family(name);
      if (kind === 'HELP') {
        if (f.help !== null) fail(lineNo, line, 'second HELP');
        if (/\\[^\\n]/.test((rest ?? '').replace(/\\\\/g, ''))) fail(lineNo, line, 'bad escape in HELP');
        f.help = rest ?? '';
      } else {
        if (types.has(name)) fail(lineNo, line, 'second TYPE');
        if (f.samples.length) fail(lineNo, line, 'TYPE after samples');
        if (!TYPES.has(rest ?? '')) fail(lineNo, line, `unknown type '${rest}'`);
        types.set(name, rest as Family['type']);
        f.type = rest as Family['type'];
      }
      if (current !== null && current !== name) closed.add(current);
      current = name;
      return;
    }
    // A sample.
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) fail(lineNo, line, 'bad sample name');
    const name = nameMatch[0];
    let pos = name.length;
    const labels: Record<string, string> = {};
    if (line[pos] === '{') {
      pos++;
      while (line[pos] !== '}') {
        const ln = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(pos));
        if (!ln) fail(lineNo, line, 'bad label name');
        const labelName = ln[0];
        if (!LABEL_NAME.test(labelName) || labelName.startsWith('__')) fail(lineNo, line, `reserved label name ${labelName}`);
        if (labelName in labels) fail(lineNo, line, `label ${labelName} twice`);
        pos += labelName.length;
        if (line[pos] !== '=' || line[pos + 1] !== '"') fail(lineNo, line, 'expected ="');
        pos += 2;
        let value = '';
        for (;;) {
          const c = line[pos];
          if (c === undefined) fail(lineNo, line, 'unterminated label value');
          if (c === '"') break;
          if (c === '\\') {
            const e = line[pos + 1];
            if (e === '\\') value += '\\';
            else if (e === '"') value += '"';
            else if (e === 'n') value += '\n';
            else fail(lineNo, line, 'bad escape in label value');
            pos += 2;
          } else {
            value += c;
            pos++;
          }
        }
        pos++; // closing quote
        labels[labelName] = value;
        if (line[pos] === ',') pos++;
        else if (line[pos] !== '}') fail(lineNo, line, 'expected , or }');
      }
      pos++;
    }
    const rest = line.slice(pos);
    const vm = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
    if (!vm) fail(lineNo, line, 'expected " value [timestamp]"');
    const value = parseValue(vm[1]!, lineNo, line);
    const famName = familyOf(name, types);
    if (closed.has(famName)) fail(lineNo, line, `samples of ${famName} are not contiguous`);
    if (current !== null && current !== famName) closed.add(current);
    current = famName;
    const f = family(famName);
    if (f.type === 'histogram' && name === famName) fail(lineNo, line, 'a histogram sample without _bucket/_sum/_count');
    if (f.type === 'histogram' && name.endsWith('_bucket') && labels.le === undefined) fail(lineNo, line, 'bucket without le');
    if (f.type === 'counter' && !(value >= 0)) fail(lineNo, line, 'negative or NaN counter');
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seenSeries.has(key)) fail(lineNo, line, 'series twice');
    seenSeries.add(key);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) g.buckets.push([parseSampleValue(le ?? '') ?? NaN, s.value]);
    else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else if (s.name === `${f.name}_count`) g.count = s.value;
  }
  for (const [key, g] of groups) {
    const where = `${f.name}${key}`;
    if (g.count === undefined || g.sum === undefined) throw new ExpositionError(`${where}: histogram without _sum or _count`);
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new ExpositionError(`${where}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new ExpositionError(`${where}: bucket counts decrease`);
    }
    if (sorted.at(-1)![1] !== g.count) throw new ExpositionError(`${where}: +Inf bucket ${sorted.at(-1)![1]} ≠ _count ${g.count}`);
  }
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when none. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
