// The one place docgen reaches into @push.rocks/smartmongo's files. The MongoDB stand-in
// (embedded-mongo.ts) is built from CongoDB's parts: its in-memory storage (extended to
// snapshot itself), its command router and its wire-protocol codec. The package's entry point
// exports all of them as `congodb`, but loading the entry point also loads SmartMongo's own
// dependencies (mongodb-memory-server and more, which docgen does not use): about 3 s more at
// every start of `docgen dev` and of every test that starts the stand-in. So the CongoDB module
// the entry point re-exports is imported from its file here, for the version package.json pins
// exactly (SUPPORTED_VERSION), and test/unit/dev-smartmongo-adapter.test.ts fails when an
// upgrade moves it or changes what the stand-in uses of it.
//
// The stand-in's behaviour is its own (embedded-mongo.ts); this file only hands over the parts.

import { createRequire } from 'node:module';

export {
  CommandRouter,
  MemoryStorageAdapter,
  WireProtocol,
  plugins,
  type CongoServer,
  type IStoredDocument,
} from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
/** The legacy query op code (drivers open a connection with it): its answers are OP_REPLY. */
export { OP_QUERY } from '@push.rocks/smartmongo/dist_ts/congodb/server/WireProtocol.js';

/** The smartmongo this adapter was written against (package.json pins it exactly). */
export const SUPPORTED_VERSION = '2.2.0';

/** Where the CongoDB module lives inside the package (what the entry point re-exports). */
export const CONGODB_MODULE = 'dist_ts/congodb/index.js';

/** The version installed. */
export function installedVersion(): string {
  return (createRequire(import.meta.url)('@push.rocks/smartmongo/package.json') as { version: string }).version;
}
