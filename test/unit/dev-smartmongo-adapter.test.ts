// The one adapter to @push.rocks/smartmongo's files (src/dev/smartmongo-adapter.ts) fails this
// test when an upgrade changes what it relies on: the version it was written for, the package's
// entry point re-exporting the CongoDB module the adapter loads from its file, and the parts of
// it the MongoDB stand-in (src/dev/embedded-mongo.ts) uses. The stand-in itself is tested in
// test/integration/embedded-mongo.test.ts and by every in-process test that starts it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONGODB_MODULE,
  CommandRouter,
  MemoryStorageAdapter,
  OP_QUERY,
  SUPPORTED_VERSION,
  WireProtocol,
  installedVersion,
  plugins,
} from '../../src/dev/smartmongo-adapter.ts';

const packageDir = dirname(createRequire(import.meta.url).resolve('@push.rocks/smartmongo/package.json'));
const packageJson = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { main: string };

describe('smartmongo adapter', () => {
  it('was written for the installed version (package.json pins it exactly)', () => {
    expect(installedVersion()).toBe(SUPPORTED_VERSION);
    const ours = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(ours.dependencies['@push.rocks/smartmongo']).toBe(SUPPORTED_VERSION);
  });

  it('loads the CongoDB module that the package entry point exports as `congodb`', () => {
    const entry = join(packageDir, packageJson.main);
    const fromEntry = `./${relative(dirname(entry), join(packageDir, CONGODB_MODULE))}`;
    expect(readFileSync(entry, 'utf8')).toContain(`export * as congodb from '${fromEntry}';`);
  });

  it('finds every part of CongoDB the stand-in uses', () => {
    expect(OP_QUERY).toBe(2004);
    expect(typeof CommandRouter.prototype.route).toBe('function');
    for (const codec of ['parseMessage', 'encodeOpMsgResponse', 'encodeOpReplyResponse'] as const)
      expect(typeof WireProtocol[codec], codec).toBe('function');
    expect(typeof plugins.bson.EJSON.stringify).toBe('function');
    const storage = MemoryStorageAdapter.prototype as unknown as Record<string, unknown>;
    for (const method of [
      'initialize',
      'close',
      'persist',
      'restore',
      'createDatabase',
      'dropDatabase',
      'createCollection',
      'dropCollection',
      'renameCollection',
      'insertOne',
      'insertMany',
      'updateById',
      'deleteById',
      'saveIndex',
      'dropIndex',
      'getIndexes',
      'findAll',
      'listDatabases',
      'listCollections',
      'count',
    ])
      expect(typeof storage[method], method).toBe('function');
  });
});
