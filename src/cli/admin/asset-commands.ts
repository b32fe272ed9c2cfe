// `docgen admin asset …`: workspace images and fonts that templates use by name
// (`{{ 'logo.png' | asset_url }}`).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Asset } from '../../gen/docgen/admin/v1/asset_pb.js';
import { need, page, PAGE_OPTIONS, str, UsageError, type Command } from './command.ts';
import { iso, more, table, time } from './output.ts';

export const assetCommands: Command[] = [
  {
    path: ['asset', 'upload'],
    synopsis: '--workspace WS_ID --file PATH [--name NAME]',
    summary:
      'Upload an image (PNG, JPEG, WebP, GIF, SVG) or font (WOFF2, WOFF, TTF, OTF); the name defaults to the file name.',
    positionals: [],
    options: { workspace: { type: 'string' }, file: { type: 'string' }, name: { type: 'string' } },
    required: ['workspace', 'file'],
    async run({ values, clients, print }) {
      const path = str(values.file);
      let content: Buffer;
      try {
        content = await readFile(path);
      } catch (err) {
        throw new UsageError(
          `--file ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
        );
      }
      const name = values.name === undefined ? basename(path) : str(values.name);
      const res = await clients.assets.uploadAsset({ workspaceId: str(values.workspace), name, content });
      const a = need(res.asset);
      const warnings = res.warnings.map((w) => `\n  warning: ${w}`).join('');
      print(
        { ...assetJson(a), warnings: res.warnings },
        `Uploaded asset ${a.id} ${a.name} (${a.contentType}, ${a.sizeBytes} bytes); use it as {{ '${a.name}' | asset_url }}${warnings}`,
      );
    },
  },
  {
    path: ['asset', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's assets by name, and its quota use.",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.assets.listAssets({ workspaceId: str(values.workspace), ...page(values) });
      print(
        {
          assets: res.assets.map(assetJson),
          usedBytes: Number(res.usedBytes),
          quotaBytes: Number(res.quotaBytes),
          nextPageToken: res.nextPageToken || null,
        },
        table(
          ['ID', 'NAME', 'TYPE', 'BYTES', 'CREATED'],
          res.assets.map((a) => [a.id, a.name, a.contentType, String(a.sizeBytes), time(a.createdAt)]),
        ) +
          more(res.nextPageToken) +
          `\n${res.usedBytes} of ${res.quotaBytes} bytes used\n`,
      );
    },
  },
  {
    path: ['asset', 'delete'],
    synopsis: 'AST_ID',
    summary: 'Delete an asset; versions that use it fail to render until one of that name exists again.',
    positionals: ['AST_ID'],
    options: {},
    async run({ args, clients, print }) {
      await clients.assets.deleteAsset({ id: args[0]! });
      print({ id: args[0], deleted: true }, `Deleted asset ${args[0]}`);
    },
  },
];

function assetJson(a: Asset) {
  return {
    id: a.id,
    workspaceId: a.workspaceId,
    name: a.name,
    contentType: a.contentType,
    kind: a.kind,
    sizeBytes: Number(a.sizeBytes),
    sha256: a.sha256,
    createdAt: iso(a.createdAt),
  };
}
