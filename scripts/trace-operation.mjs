// Lists the files an operation's own code passes through beyond the shared path
// (docs/architecture-operations.md#what-a-reader-opens-for-an-operation).
//
// Usage: node scripts/trace-operation.mjs <operationId> [...]   (--json for machine output,
//        --shared to list the shared path itself)
//
// The counting rule, applied by the TypeScript compiler API to the code as it is:
//
// - A file is the operation's when its handler (the function the export named by the operationId
//   in src/handlers/ wraps: `tenantRead(fn)` built the handler at startup, a request runs `fn`)
//   reaches a value declared in it: a function it calls, a class it builds, a
//   constant or table it reads, and so on transitively through what those declarations' own
//   bodies reach. Only values count: type-only references (an interface, a type alias, a generated
//   type) count nowhere, since they neither run nor hold a rule. Calls through an interface (the
//   services of `AppServices`, built once at startup) are not followed: the interface is all the
//   operation's code names.
// - The shared path is what the pipeline runs for every operation of the same access kind, walked
//   the same way from `createApp` (src/app.ts) without following the operation table: the stages
//   and what they call for every request, plus tenant entry (`enterTenant`) for a tenant operation
//   (x-access tenantMember / tenantAdmin / tenantPlatformAdmin) or the SCIM token's transaction
//   (`runScim`) for a SCIM operation. What it runs is not counted; a file of it still counts when
//   the operation reaches a declaration in it that the shared path does not run (code of the
//   operation kept in a shared file), or when it names the operation (its operationId as a
//   string). The shared files the operation calls only for what the shared path runs anyway are
//   listed apart (`alsoShared`).
// - Files outside src/ (generated/, node_modules) are not counted.
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SRC = path.join(ROOT, 'src') + path.sep;

function program() {
  const config = ts.findConfigFile(ROOT, ts.sys.fileExists, 'tsconfig.json');
  const { config: json } = ts.readConfigFile(config, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(json, ts.sys, ROOT, undefined, config);
  const roots = parsed.fileNames.filter((f) => path.resolve(f).startsWith(SRC));
  return ts.createProgram(roots, { ...parsed.options, noEmit: true });
}

const VALUE_DECLARATIONS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.VariableDeclaration,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.PropertyAssignment,
  ts.SyntaxKind.PropertyDeclaration,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.Constructor,
]);

/** Walks value references from `starts` (declaration nodes); `stop(symbol)` cuts a reference. Returns files → declaration names. */
function reach(checker, starts, stop = () => false) {
  const seen = new Set();
  const files = new Map();
  const queue = [...starts];
  const visit = (node) => {
    if (ts.isTypeNode(node) && !ts.isExpressionWithTypeArguments(node)) return;
    if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      let symbol = checker.getSymbolAtLocation(node);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      if (symbol && !stop(symbol)) {
        for (const d of symbol.declarations ?? []) {
          const file = path.resolve(d.getSourceFile().fileName);
          if (!file.startsWith(SRC) || file.endsWith('.d.ts') || !VALUE_DECLARATIONS.has(d.kind) || seen.has(d)) continue;
          queue.push(d);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  while (queue.length) {
    const d = queue.shift();
    if (seen.has(d)) continue;
    seen.add(d);
    const file = path.relative(ROOT, d.getSourceFile().fileName);
    if (!files.has(file)) files.set(file, new Set());
    const name = d.name && ts.isIdentifier(d.name) ? d.name.text : ts.SyntaxKind[d.kind];
    files.get(file).add(name);
    visit(d);
  }
  return Object.assign(files, { declarations: seen });
}

function exported(source, name) {
  for (const st of source.statements) {
    if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name) && d.name.text === name) return d;
    if (ts.isFunctionDeclaration(st) && st.name?.text === name) return st;
  }
  return null;
}

/** The files of the shared path of each kind of operation (caller, tenant, scim). */
export function sharedPaths() {
  return traceOperations([]).shared;
}

export function traceOperations(operationIds) {
  const prog = program();
  const checker = prog.getTypeChecker();
  const sources = prog.getSourceFiles().filter((s) => path.resolve(s.fileName).startsWith(SRC));
  const app = sources.find((s) => path.relative(ROOT, s.fileName) === 'src/app.ts');
  const createApp = exported(app, 'createApp');
  const table = sources.find((s) => path.relative(ROOT, s.fileName) === 'src/handlers/index.ts');
  const isTable = (symbol) => (symbol.declarations ?? []).some((d) => d.getSourceFile() === table);
  const declaredIn = (file, name) => exported(sources.find((s) => path.relative(ROOT, s.fileName) === file), name);
  const KIND_ENTRY = { tenant: declaredIn('src/tenancy/enter.ts', 'enterTenant'), scim: declaredIn('src/http/scim-dispatch.ts', 'runScim') };
  const entries = new Set(Object.values(KIND_ENTRY));
  const isKindEntry = (symbol) => (symbol.declarations ?? []).some((d) => entries.has(d));
  const base = reach(checker, [createApp], (symbol) => isTable(symbol) || isKindEntry(symbol));
  const kindPaths = Object.fromEntries(Object.entries(KIND_ENTRY).map(([k, d]) => [k, reach(checker, [d])]));
  const sharedFor = (kind) => {
    const files = new Set(base.keys());
    const declarations = new Set(base.declarations);
    if (kindPaths[kind]) {
      for (const f of kindPaths[kind].keys()) files.add(f);
      for (const d of kindPaths[kind].declarations) declarations.add(d);
    }
    return Object.assign(files, { declarations });
  };
  const handlerFiles = sources.filter((s) => path.relative(ROOT, s.fileName).startsWith('src/handlers/'));
  const traced = operationIds.map((id) => {
    const start = handlerFiles.map((s) => exported(s, id)).find(Boolean);
    if (!start) throw new Error(`no handler named '${id}' in src/handlers/`);
    const wrapper = start.initializer && ts.isCallExpression(start.initializer) ? start.initializer.expression.getText() : '';
    const kind = { tenantRead: 'tenant', tenantScoped: 'tenant', scimOperation: 'scim' }[wrapper] ?? 'caller';
    const shared = sharedFor(kind);
    // The request runs the function the wrapper was given; the wrapper itself ran at startup.
    const run = start.initializer && ts.isCallExpression(start.initializer) ? start.initializer.arguments[0] : start;
    const own = reach(checker, [run]);
    const naming = new RegExp(`['"\`]${id}['"\`]`);
    const files = [];
    const alsoShared = [];
    // A file counts when the operation reaches a declaration in it that the shared path does not run.
    const ownDeclarations = new Map();
    for (const d of own.declarations) {
      if (shared.declarations.has(d)) continue;
      const file = path.relative(ROOT, d.getSourceFile().fileName);
      if (!ownDeclarations.has(file)) ownDeclarations.set(file, new Set());
      if (d.name && ts.isIdentifier(d.name)) ownDeclarations.get(file).add(d.name.text);
    }
    for (const [file, names] of own) {
      if (!shared.has(file)) files.push({ file, reached: [...names].sort() });
      else if (ownDeclarations.has(file)) files.push({ file, reached: [...ownDeclarations.get(file)].sort(), shared: true });
      else alsoShared.push({ file });
    }
    for (const file of shared) {
      if (files.some((f) => f.file === file)) continue;
      const text = prog.getSourceFile(path.join(ROOT, file)).text;
      if (naming.test(text)) files.push({ file, reached: ['(names the operation: code of it alone in the shared path)'] });
    }
    files.sort((a, b) => a.file.localeCompare(b.file));
    alsoShared.sort((a, b) => a.file.localeCompare(b.file));
    return { operationId: id, kind, count: files.length, files, alsoShared: alsoShared.map((f) => f.file).filter((f) => !files.some((o) => o.file === f)) };
  });
  const shared = Object.fromEntries(['caller', 'tenant', 'scim'].map((k) => [k, [...sharedFor(k)].sort()]));
  return Object.assign(traced, { shared });
}

if (path.resolve(process.argv[1] ?? '') === path.resolve(new URL(import.meta.url).pathname)) {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const ids = args.filter((a) => !a.startsWith('--'));
  if (!ids.length && !args.includes('--shared')) {
    console.error('usage: node scripts/trace-operation.mjs <operationId> [...] [--json] [--shared]');
    process.exit(2);
  }
  const traced = traceOperations(ids);
  if (args.includes('--shared')) {
    const base = traced.shared.caller;
    console.log(`shared path of every operation: ${base.length} files\n  ${base.join('\n  ')}`);
    for (const kind of ['tenant', 'scim']) console.log(`and of a ${kind} operation: ${traced.shared[kind].filter((f) => !base.includes(f)).join(', ')}`);
  }
  if (json) console.log(JSON.stringify(traced, null, 2));
  else
    for (const t of traced) {
      console.log(`${t.operationId} (${t.kind} operation): ${t.count} file${t.count === 1 ? '' : 's'} beyond the shared path`);
      for (const f of t.files) console.log(`  ${f.file}   (${f.reached.slice(0, 12).join(', ')}${f.reached.length > 12 ? ', …' : ''})`);
      console.log(`  also calls into the shared path: ${t.alsoShared.join(', ') || 'nothing'}`);
    }
}
