// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

// knex, pg and Objection through their public APIs only: a deep import, a private field or a
// replaced method breaks silently on an upgrade.
const LIBRARY_INTERNALS = {
  group: ['knex/*', 'pg/*', 'pg-pool/*', 'pg-protocol', 'pg-protocol/*', 'objection/*', 'tarn', 'tarn/*'],
  message: 'Use the public API of knex, pg and Objection (the package root), not their internals.',
};
const INTERNALS_SYNTAX = [
  {
    selector: 'MemberExpression[property.name=/^_{1,2}knex/], Identifier[name=/^_{1,2}knex/], Literal[value=/^_{1,2}knex/]',
    message: "knex's private fields (__knex…) are not an API: use a public one.",
  },
  {
    selector: "AssignmentExpression > MemberExpression.left[property.name='query']",
    message: 'Do not replace a driver method (`.query = …`): wrap calls in a function of src/db instead.',
  },
];

// Layers point one way: server → app → handlers → http → auth / tenancy → domain → db. The
// neutral modules (src/context, config, errors, logger) may be read by every layer. The embedded
// PostgreSQL is started by the server alone, and speaks to PostgreSQL itself (`sql: true`).
const LAYERS = [
  { name: 'server', files: ['src/server.ts', 'src/build-services.ts', 'src/workers/**/*.ts'], modules: ['server', 'build-services', 'workers'] },
  { name: 'embedded-postgres', files: ['src/embedded-postgres/**/*.ts'], modules: ['embedded-postgres'], sql: true },
  { name: 'app', files: ['src/app.ts'], modules: ['app'] },
  { name: 'handlers', files: ['src/handlers/**/*.ts'], modules: ['handlers'] },
  { name: 'http', files: ['src/http/**/*.ts'], modules: ['http'] },
  { name: 'rate-limit', files: ['src/rate-limit/**/*.ts'], modules: ['rate-limit'] },
  { name: 'auth', files: ['src/auth/**/*.ts'], modules: ['auth'], peers: ['tenancy'] },
  { name: 'tenancy', files: ['src/tenancy/**/*.ts'], modules: ['tenancy'], peers: ['auth'] },
  { name: 'domain', files: ['src/domain/**/*.ts', 'src/mail/**/*.ts'], modules: ['domain', 'mail'] },
  { name: 'db', files: ['src/db/**/*.ts'], modules: ['db'], sql: true },
  { name: 'neutral', files: ['src/context/**/*.ts', 'src/config/**/*.ts', 'src/errors.ts', 'src/logger.ts', 'src/openapi-document.ts'], modules: [] },
];
/** A relative import of `module` (a directory or a file of src/) from anywhere under src/. */
const importOf = (module) => `^(\\./|(\\.\\./)+)${module}(/.*)?$`;
/** The layers a file of `layer` may not import: every layer above it, and its peers. */
function forbiddenFor(layer) {
  if (layer.name === 'neutral') return LAYERS.filter((l) => !['db', 'neutral'].includes(l.name));
  const above = LAYERS.slice(0, LAYERS.indexOf(layer));
  const peers = LAYERS.filter((l) => (layer.peers ?? []).includes(l.name) && !above.includes(l));
  return [...above, ...peers];
}
function layerPatterns(layer) {
  return forbiddenFor(layer).flatMap((l) =>
    l.modules.map((m) => ({
      regex: importOf(m),
      message: `Layers point one way (server → app → handlers → http → auth / tenancy → domain → db): ${layer.name} may not import ${l.name}. Shared types go in src/context.`,
    })),
  );
}

// SQL, knex and objection belong in src/db only: domain code calls the named queries of src/db/queries
// (types come from src/db: Transaction, Database).
const DB_ONLY_PATHS = [
  { name: 'knex', message: 'SQL belongs in src/db: add a named query in src/db/queries (types: Transaction/Database from src/db/tenant-scope).' },
  { name: 'objection', message: 'Objection belongs in src/db: call the queries of src/db/queries.' },
  { name: 'pg', message: 'SQL belongs in src/db.' },
];
// Rows stay in src/db: the query modules map them to the domain types (src/context/entities.ts)
// once, so no layer above reaches a table through a model (docs/architecture.md#one-vocabulary).
const MODELS_ONLY_IN_DB = {
  regex: importOf('db/models'),
  message: 'Models are rows and stay in src/db: call a function of src/db/queries, which returns the domain types of src/context/entities.ts.',
};
// …nor a row type by another route (docs/architecture.md#rows-stay-in-srcdb): a `*Row` type of any
// module of src/db (a query module's row interface, a model re-exported) is not imported above it,
// and src/db exports no alias, interface or function signature built on one (`type X =
// Pick<FooRow, …>`, `Promise<FooRow>`, `export { FooRow as Foo }`): what crosses the boundary is a
// domain type of src/context. Exported functions of src/db state their return type, so an inferred
// model type cannot cross it either.
const ROW_TYPE = '^[A-Z]\\w*Row$';
const ROW_TYPES_ONLY_IN_DB = {
  regex: importOf('db'),
  importNamePattern: ROW_TYPE,
  message: 'Row types stay in src/db: the query returns a domain type of src/context (records.ts, entities.ts); import that.',
};
const ROW_NAME = `/${ROW_TYPE.replace(/\\\\/g, '\\')}/`;
const ROW_EXPORT_MESSAGE = 'src/db exports no row-derived type: declare the domain type in src/context and map the row to it in the query (docs/architecture.md#rows-stay-in-srcdb).';
const DB_EXPORT_SYNTAX = [
  { selector: `ExportNamedDeclaration > TSTypeAliasDeclaration[id.name!=${ROW_NAME}] TSTypeReference > Identifier.typeName[name=${ROW_NAME}]`, message: ROW_EXPORT_MESSAGE },
  { selector: `ExportNamedDeclaration > TSInterfaceDeclaration[id.name!=${ROW_NAME}] :matches(TSTypeReference > Identifier.typeName, TSInterfaceHeritage > Identifier.expression)[name=${ROW_NAME}]`, message: ROW_EXPORT_MESSAGE },
  { selector: `ExportNamedDeclaration > FunctionDeclaration > TSTypeAnnotation.returnType Identifier[name=${ROW_NAME}]`, message: ROW_EXPORT_MESSAGE },
  { selector: `ExportNamedDeclaration > FunctionDeclaration > .params TSFunctionType Identifier[name=${ROW_NAME}]`, message: ROW_EXPORT_MESSAGE },
  { selector: `ExportNamedDeclaration > VariableDeclaration > VariableDeclarator > :function > TSTypeAnnotation.returnType Identifier[name=${ROW_NAME}]`, message: ROW_EXPORT_MESSAGE },
  { selector: `ExportSpecifier[local.name=${ROW_NAME}][exported.name!=${ROW_NAME}]`, message: ROW_EXPORT_MESSAGE },
];
const OUTSIDE_DB_SYNTAX = [
  {
    selector: "CallExpression[callee.property.name=/^(raw|whereRaw|orWhereRaw|havingRaw|orderByRaw|joinRaw|fromRaw|selectRaw)$/]",
    message: 'Raw SQL belongs in src/db/queries.',
  },
  {
    // A transaction opened here would not set the runtime role (lost behind a transaction pooler).
    selector: "CallExpression[callee.property.name='transaction']",
    message: 'Open transactions with withTenant / withService / withPlatformRead / withSavepoint (src/db/tenant-scope.ts): they set the database role.',
  },
  {
    selector: "CallExpression[callee.name=/^(db|trx|knex)$/], CallExpression[callee.property.name=/^(db|trx|knex)$/]",
    message: 'Query through a model (src/db/models.ts) or a named query (src/db/queries), not the knex builder.',
  },
  {
    // Request state travels in one typed object.
    selector: "MemberExpression[property.name='locals']",
    message: 'Keep request state in the typed RequestState (src/http/request-state.ts), not res.locals.',
  },
];

const CONSOLE_FORBIDDEN_GLOBALS = [
  { name: 'fetch', message: 'Call the API through the generated client (@generated/sdk.gen or @generated/@tanstack/react-query.gen), not by hand.' },
  { name: 'XMLHttpRequest', message: 'Call the API through the generated client, not by hand.' },
  { name: 'localStorage', message: 'Tokens and session state stay in sessionStorage or memory, never localStorage, docs/console.md.' },
];

/** One config block per layer: the library-internals ban, the layer's direction, and (outside src/db) the SQL ban. */
const layerConfigs = LAYERS.map((layer) => {
  const outsideDb = !layer.sql;
  const patterns = [LIBRARY_INTERNALS, ...(outsideDb ? [MODELS_ONLY_IN_DB, ROW_TYPES_ONLY_IN_DB] : []), ...layerPatterns(layer)];
  const options = { paths: outsideDb ? DB_ONLY_PATHS : [], patterns };
  return {
    files: layer.files,
    rules: {
      // The neutral module may name a layer's types (erased at run time), never import its code.
      ...(layer.name === 'neutral'
        ? { 'no-restricted-imports': ['error', { paths: DB_ONLY_PATHS, patterns: [LIBRARY_INTERNALS, MODELS_ONLY_IN_DB, ROW_TYPES_ONLY_IN_DB] }], '@typescript-eslint/no-restricted-imports': ['error', { patterns: layerPatterns(layer).map((p) => ({ ...p, allowTypeImports: true })) }] }
        : { 'no-restricted-imports': ['error', options] }),
      'no-restricted-syntax': ['error', ...INTERNALS_SYNTAX, ...(outsideDb ? OUTSIDE_DB_SYNTAX : layer.name === 'db' ? DB_EXPORT_SYNTAX : [])],
      ...(layer.name === 'db' ? { '@typescript-eslint/explicit-module-boundary-types': 'error' } : {}),
    },
  };
});

export default tseslint.config(
  // test/fixtures/lint: code that must fail, linted by test/unit/lint-rules.test.ts as files of src/.
  { ignores: ['dist/**', 'generated/**', 'node_modules/**', 'coverage/**', 'test-output/**', '.data/**', 'test/fixtures/lint/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly', URL: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-console': 'off' },
  },
  // Files of src/ outside the layers (the CLI, ambient types): still no library internals and no SQL.
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: DB_ONLY_PATHS, patterns: [LIBRARY_INTERNALS, MODELS_ONLY_IN_DB, ROW_TYPES_ONLY_IN_DB] }],
      'no-restricted-syntax': ['error', ...INTERNALS_SYNTAX, ...OUTSIDE_DB_SYNTAX],
    },
  },
  ...layerConfigs,
  {
    // The error catalog is read by every layer, so it depends on none (not even for types).
    files: ['src/errors.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...INTERNALS_SYNTAX,
        ...OUTSIDE_DB_SYNTAX,
        { selector: 'ImportDeclaration, ExportAllDeclaration, ExportNamedDeclaration[source]', message: 'src/errors.ts imports nothing: database errors are mapped in src/db/database-errors.ts.' },
      ],
    },
  },
  {
    // The pipeline stays a set of small named stages (issue 13).
    files: ['src/http/**/*.ts', 'src/app.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['src/cli/**/*.ts', 'bench/**/*.ts', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The console calls the API only through the generated client, and keeps tokens out of
    // localStorage, docs/console.md.
    files: ['console/src/**/*.ts', 'console/src/**/*.tsx'],
    rules: {
      'no-restricted-globals': ['error', ...CONSOLE_FORBIDDEN_GLOBALS],
      'no-restricted-properties': ['error', ...CONSOLE_FORBIDDEN_GLOBALS.map(({ name, message }) => ({ object: 'window', property: name, message }))],
    },
  },
);
