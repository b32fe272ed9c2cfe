// Builds the portal (a Preact single-page app) into portal/dist, which the admin listener
// serves at `/` (src/portal/portal-assets.ts). Vite's own transformer (oxc) compiles the JSX
// for Preact, so no framework plugin is needed. `@gen` is the server's generated protobuf code
// (src/gen): the browser and the server share one copy of the admin API's types. `@domain` is
// the server's src/domain, of which the portal imports only the browser-safe document settings
// (their rules: one copy for server, CLI and portal; eslint.config.js keeps it to that file).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: false,
  resolve: {
    alias: { '@gen': here('../src/gen'), '@domain': here('../src/domain') },
  },
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // The favicon stays a file under /assets/: inlined as a data: URL, the CSP (img-src 'self')
    // would refuse it.
    assetsInlineLimit: (file: string) => (file.endsWith('favicon.svg') ? false : undefined),
    // pdf.js is large; it loads only with the template editor.
    chunkSizeWarningLimit: 1200,
  },
  logLevel: 'warn',
});
