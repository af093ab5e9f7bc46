// Fails when the modules of src/ and console/src import each other in a cycle.
//
// Usage: node scripts/check-import-cycles.mjs [dir ...]   (default: src console/src)
//
// What counts as an import: every module specifier that resolves to a .ts/.tsx/.mts/.js file under
// one of the scanned folders — relative ones, and the tsconfig `paths` aliases (resolved with the
// compiler options of the tsconfig.json nearest each file, by the TypeScript compiler API). All
// forms count: `import`, `import type`, `export … from`, `export type … from`, `import x =
// require()`, `import()` (lazy loading still depends on the module) and `import('…').T` in types.
// Type-only imports count on purpose: the point is layering (docs/architecture.md#layers), and a
// type that two layers both need belongs in a module below both (src/context), not in either.
//
// A cycle is a strongly connected component of that graph (Tarjan) with more than one file, or a
// file importing itself. For each, the output lists its files, every import between them (file,
// line, specifier, what it imports) and one shortest loop through them; the exit code is 1.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|jsx)$/;
const DEFAULT_OPTIONS = { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, allowJs: true, jsx: ts.JsxEmit.Preserve };

/** Every source file under `dir` (absolute paths), skipping node_modules and declaration files. */
function sourceFiles(dir) {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && SOURCE.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath ?? e.path, e.name))
    .filter((f) => !f.split(path.sep).includes('node_modules'))
    .sort();
}

/** The compiler options of the tsconfig.json nearest `dir`, or neutral defaults. */
const optionsCache = new Map();
function optionsFor(dir) {
  const config = ts.findConfigFile(dir, ts.sys.fileExists, 'tsconfig.json');
  if (!config) return DEFAULT_OPTIONS;
  if (!optionsCache.has(config)) {
    const { config: json, error } = ts.readConfigFile(config, ts.sys.readFile);
    if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
    const parsed = ts.parseJsonConfigFileContent(json, ts.sys, path.dirname(config), undefined, config);
    optionsCache.set(config, { ...parsed.options, allowJs: true });
  }
  return optionsCache.get(config);
}

/** The module specifiers of one file: { specifier, line, what, typeOnly }. */
function specifiersOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const add = (literal, what, typeOnly) => {
    if (!literal || !ts.isStringLiteralLike(literal)) return;
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    found.push({ specifier: literal.text, line, what, typeOnly });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const names = [];
      if (clause?.name) names.push(clause.name.text);
      if (clause?.namedBindings) {
        if (ts.isNamespaceImport(clause.namedBindings)) names.push(`* as ${clause.namedBindings.name.text}`);
        else names.push(...clause.namedBindings.elements.map((e) => (e.isTypeOnly ? `type ${e.name.text}` : e.name.text)));
      }
      const typeOnly = Boolean(clause?.isTypeOnly) || (names.length > 0 && names.every((n) => n.startsWith('type ')));
      add(node.moduleSpecifier, names.length ? `{ ${names.join(', ')} }` : '(side effects)', typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const names = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements.map((e) => e.name.text) : null;
      const typeOnly = node.isTypeOnly || Boolean(node.exportClause && ts.isNamedExports(node.exportClause) && node.exportClause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, names ? `export { ${names.join(', ')} }` : 'export *', typeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.name.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], 'import()', false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, `import('…')${node.qualifier ? `.${node.qualifier.getText(source)}` : ''}`, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The import graph of `files`: file → [{ to, specifier, line, what, typeOnly }]. */
function importGraph(files) {
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const options = optionsFor(path.dirname(file));
    const edges = [];
    for (const s of specifiersOf(file)) {
      const { resolvedModule } = ts.resolveModuleName(s.specifier, file, options, ts.sys);
      const to = resolvedModule && path.resolve(resolvedModule.resolvedFileName);
      if (to && known.has(to)) edges.push({ to, ...s });
    }
    graph.set(file, edges);
  }
  return graph;
}

/** Strongly connected components (Tarjan), each a sorted list of files. */
function components(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  const connect = (v) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v)) {
      if (!index.has(to)) {
        connect(to);
        low.set(v, Math.min(low.get(v), low.get(to)));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v), index.get(to)));
    }
    if (low.get(v) === index.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return out;
}

/** One shortest loop from `start` back to itself, inside `members` (breadth first). */
function shortestLoop(graph, start, members) {
  const cameFrom = new Map();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const edge of graph.get(v)) {
      if (!members.has(edge.to) || cameFrom.has(edge.to)) continue;
      cameFrom.set(edge.to, { from: v, edge });
      if (edge.to === start) {
        const loop = [];
        for (let at = start; ; ) {
          const step = cameFrom.get(at);
          loop.unshift({ from: step.from, ...step.edge });
          at = step.from;
          if (at === start) return loop;
        }
      }
      queue.push(edge.to);
    }
  }
  return [];
}

/** The cycles among the files under `dirs`, each { files, imports, loop } (paths relative to `base`). */
export function findImportCycles(dirs, base = process.cwd()) {
  const files = dirs.flatMap((d) => sourceFiles(path.resolve(base, d)));
  const graph = importGraph(files);
  const rel = (f) => path.relative(base, f).split(path.sep).join('/');
  const describe = (from, e) => ({ from: rel(from), to: rel(e.to), line: e.line, specifier: e.specifier, what: e.what, typeOnly: e.typeOnly });
  return components(graph)
    .filter((scc) => scc.length > 1 || graph.get(scc[0]).some((e) => e.to === scc[0]))
    .map((scc) => {
      const members = new Set(scc);
      const imports = scc.flatMap((from) => graph.get(from).filter((e) => members.has(e.to)).map((e) => describe(from, e)));
      const loop = shortestLoop(graph, scc[0], members).map((e) => describe(e.from, e));
      return { files: scc.map(rel), imports, loop };
    });
}

function report(cycles) {
  const edge = (e) => `${e.from}:${e.line} → ${e.to}   (${e.typeOnly ? 'type-only ' : ''}'${e.specifier}' ${e.what})`;
  const lines = [`${cycles.length} import cycle${cycles.length === 1 ? '' : 's'}:`];
  cycles.forEach((c, i) => {
    lines.push('', `Cycle ${i + 1}: ${c.files.length} file${c.files.length === 1 ? '' : 's'}: ${c.files.join(', ')}`);
    lines.push('  shortest loop:', ...c.loop.map((e) => `    ${edge(e)}`));
    lines.push('  every import inside it (removing enough of these breaks it):', ...c.imports.map((e) => `    ${edge(e)}`));
  });
  return lines.join('\n');
}

if (path.resolve(process.argv[1] ?? '') === path.resolve(new URL(import.meta.url).pathname)) {
  const args = process.argv.slice(2);
  const base = args.length ? process.cwd() : ROOT;
  const dirs = args.length ? args : ['src', 'console/src'];
  const cycles = findImportCycles(dirs, base);
  if (cycles.length) {
    console.error(report(cycles));
    process.exit(1);
  }
  console.log(`No import cycles in ${dirs.join(', ')}.`);
}
