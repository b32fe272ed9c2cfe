// ESLint (npm run lint; part of npm test). typescript-eslint's recommended rules for all of
// our TypeScript, react-hooks' rules for the portal's Preact components. Formatting is
// Prettier's job (.prettierrc.json), not ESLint's.
import comments from '@eslint-community/eslint-plugin-eslint-comments/configs';
import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Dependencies are used through their public API. The two places that must reach past it are
// named adapters (they say why, pin the version, and have a test that fails on an upgrade):
const ADAPTERS = ['src/render/chromium/puppeteer-cluster-adapter.ts', 'src/dev/smartmongo-adapter.ts'];
const PRIVATE_PATHS = {
  regex: '(^puppeteer-cluster/dist/|^@push\\.rocks/smartmongo/|/dist_ts/|/internal(/|$))',
  message: 'A dependency’s private files: use its public API, or go through its named adapter (eslint.config.js).',
};
const UNIT_ONLY =
  'test/unit runs in process only: a test that starts Chromium, nats-server, an S3 server or another process belongs in test/integration.';
// The portal's import names (@gen, @domain) exist in its bundler and in vitest, not in Node.
const PORTAL_NAMES = {
  regex: '^@(gen|domain)/',
  message: 'Node resolves relative paths only; @gen/@domain are the portal’s.',
};

export default tseslint.config(
  {
    ignores: [
      'src/gen/**',
      // The SDK's build output and its link to src/gen (see sdk/typescript/scripts/build.js).
      'sdk/typescript/dist/**',
      'sdk/typescript/src/gen/**',
      'portal/dist/**',
      'build/**',
      'node_modules/**',
      'coverage/**',
      '.docgen/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  comments.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Every eslint-disable says why, after `--`.
      '@eslint-community/eslint-comments/require-description': ['error', { ignore: [] }],
      // Unused names are mistakes, except the conventional `_`-prefixed ones (ignored parameters,
      // rest siblings that drop a field).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Our input rules name control characters on purpose (variable names, header values).
      'no-control-regex': 'off',
      // Lines stay within Prettier's 120 columns; Prettier wraps code but not comments or the
      // text of strings, templates, URLs and regular expressions, which stay whole (a message is
      // easier to find by grep in one piece).
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'gateway/**/*.ts', 'bench/**/*.ts', 'bin/**/*.js', 'scripts/**/*.ts'],
    ignores: ADAPTERS,
    rules: { 'no-restricted-imports': ['error', { patterns: [PORTAL_NAMES, PRIVATE_PATHS] }] },
  },
  {
    files: ['test/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [PRIVATE_PATHS] }] },
  },
  {
    // test/unit is fast and in process (the MongoDB stand-in included): no Chromium, nats-server,
    // S3 server, child processes or external tools. Tests that need them live in test/integration.
    files: ['test/unit/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node:child_process', message: UNIT_ONLY },
            { name: 'puppeteer', message: UNIT_ONLY },
            { name: '../harness/spawn-docgen.ts', message: UNIT_ONLY },
            {
              name: '../harness/dependencies.ts',
              importNames: ['startNats', 'startS3', 'chromiumPath', 'dependencyEnv'],
              message: UNIT_ONLY,
            },
          ],
          patterns: [
            PRIVATE_PATHS,
            {
              regex:
                '/(render/chromium/(browser-pool|browser-host)|render/render-engine|render/liquid/liquid-renderer|dev/embedded-(nats|s3))\\.ts$',
              message: UNIT_ONLY,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks read arbitrary JSON bodies and library internals they assert on.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['portal/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // Of the server's domain code the browser gets the document settings' rules only: the
      // rest may use Node or the database driver.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@domain/(?!document-settings$)',
              message: 'The portal imports only @domain/document-settings (browser-safe) from src/domain.',
            },
            PRIVATE_PATHS,
          ],
        },
      ],
    },
  },
  {
    // Bundled into the portal as well: it imports nothing, and uses no Node globals.
    files: ['src/domain/document-settings.ts', 'src/domain/audit-words.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '.', message: 'This file runs in the browser too: it imports nothing.' }] },
      ],
      'no-restricted-globals': ['error', 'Buffer', 'process', 'require', '__dirname'],
    },
  },
);
