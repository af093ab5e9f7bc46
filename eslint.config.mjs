// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'generated/**', 'node_modules/**', 'coverage/**', 'test-output/**', '.data/**'] },
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
  // SQL, knex and objection belong in src/db only (issue 12): domain code calls models and the
  // named queries of src/db/queries; types come from src/db (Transaction, Database).
  {
    files: ['src/**/*.ts'],
    ignores: ['src/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'knex', message: 'SQL belongs in src/db: add a model query or a named query in src/db/queries (types: Transaction/Database from src/db/tenant-scope).' },
            { name: 'objection', message: 'Objection belongs in src/db: use the models of src/db/models.ts and the queries of src/db/queries.' },
            { name: 'pg', message: 'SQL belongs in src/db.' },
          ],
          patterns: [{ group: ['knex/*', 'objection/*', 'pg/*'], message: 'SQL belongs in src/db.' }],
        },
      ],
      'no-restricted-syntax': [
        'error',
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
          // Request state travels in one typed object (issue 13).
          selector: "MemberExpression[property.name='locals']",
          message: 'Keep request state in the typed RequestState (src/http/request-state.ts), not res.locals.',
        },
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
);
