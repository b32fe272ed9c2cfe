// `docgen admin key …`: API keys.
import { ApiKeyMode, type ApiKey } from '../../gen/docgen/admin/v1/api_key_pb.js';
import {
  list,
  need,
  page,
  PAGE_OPTIONS,
  positiveInteger,
  positiveNumber,
  str,
  UsageError,
  type Command,
} from './command.ts';
import { iso, more, table, time } from './output.ts';

export const keyCommands: Command[] = [
  {
    path: ['key', 'create'],
    synopsis:
      '--workspace WS_ID --name NAME --scopes SCOPE[,SCOPE] [--mode live|test] [--rate-limit PER_SECOND] [--burst N]',
    summary:
      'Create an API key (svc_live_…, or svc_test_… with --mode test: stamped TEST, kept a day); the key is printed once and cannot be shown again.',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      mode: { type: 'string' },
      'rate-limit': { type: 'string' },
      burst: { type: 'string' },
    },
    required: ['workspace', 'name', 'scopes'],
    async run({ values, clients, print }) {
      const res = await clients.apiKeys.createApiKey({
        workspaceId: str(values.workspace),
        name: str(values.name),
        scopes: list(values.scopes),
        rateLimitPerSecond:
          values['rate-limit'] === undefined ? 0 : positiveNumber('--rate-limit', values['rate-limit']),
        rateLimitBurst: values.burst === undefined ? 0 : positiveInteger('--burst', values.burst),
        mode: modeFlag(values.mode),
      });
      const k = need(res.apiKey);
      print(
        // The prefix of the key says its mode; the JSON keeps its two documented fields.
        { id: k.id, key: res.secret },
        `Created ${modeName(k.mode)} API key ${k.id} (${k.name}, scopes ${k.scopes.join(', ')})\n\n  ${res.secret}\n\nStore it now: it is shown only this once.`,
      );
    },
  },
  {
    path: ['key', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's API keys (prefix only, never the key).",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.apiKeys.listApiKeys({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { apiKeys: res.apiKeys.map(apiKeyJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'NAME', 'MODE', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED'],
          res.apiKeys.map((k) => [
            k.id,
            k.name,
            modeName(k.mode),
            `${k.prefix}…`,
            k.scopes.join(','),
            time(k.createdAt),
            time(k.lastUsedAt),
            time(k.revokedAt),
          ]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['key', 'revoke'],
    synopsis: 'KEY_ID',
    summary: 'Revoke an API key (takes effect within a second).',
    positionals: ['KEY_ID'],
    options: {},
    async run({ args, clients, print }) {
      const k = need((await clients.apiKeys.revokeApiKey({ id: args[0]! })).apiKey);
      print(apiKeyJson(k), `Revoked API key ${k.id} (${k.name}) at ${time(k.revokedAt)}`);
    },
  },
];

/** `--mode live|test`; absent is live. */
function modeFlag(value: string | boolean | undefined): ApiKeyMode {
  if (value === undefined) return ApiKeyMode.LIVE;
  const mode = str(value).trim().toLowerCase();
  if (mode === 'live') return ApiKeyMode.LIVE;
  if (mode === 'test') return ApiKeyMode.TEST;
  throw new UsageError(`--mode ${JSON.stringify(str(value))} is not a mode: use live or test`);
}

function modeName(mode: ApiKeyMode): 'live' | 'test' {
  return mode === ApiKeyMode.TEST ? 'test' : 'live';
}

function apiKeyJson(k: ApiKey) {
  return {
    id: k.id,
    workspaceId: k.workspaceId,
    name: k.name,
    mode: modeName(k.mode),
    scopes: k.scopes,
    prefix: k.prefix,
    createdAt: iso(k.createdAt),
    lastUsedAt: iso(k.lastUsedAt),
    revokedAt: iso(k.revokedAt),
    rateLimitPerSecond: k.rateLimitPerSecond || null,
    rateLimitBurst: k.rateLimitBurst || null,
  };
}
