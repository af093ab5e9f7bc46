/**
 * Builds the console (a React single-page app) into dist/console, served by the service at
 * /console (src/http/console.ts). Hashed file names under assets/ are cached for a year; the
 * page itself is revalidated on every visit.
 *
 * No plugin: Vite's own transform (oxc) compiles TSX with React's automatic runtime. The
 * dev-server-only React refresh plugin is left out; `npm run build` is the only way we build.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  resolve: {
    alias: {
      '@generated': path.resolve(here, '..', 'generated'),
      // Dependency-free constants the service and the console share (src/context/event-actions.ts).
      '@service/context': path.resolve(here, '..', 'src', 'context'),
    },
  },
  build: {
    outDir: path.resolve(here, '..', 'dist', 'console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline <script> or module-preload polyfill: the CSP allows script-src 'self' only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // React Query's "use client" markers mean nothing outside a server-components build.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
