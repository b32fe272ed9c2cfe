// The workspace assets one render uses (the names asset_url saw), read from MongoDB and the
// object store. Bytes are cached per asset id: an asset is immutable, so a cached copy is
// always right, and a deleted one is no longer found by name. The cache is bounded in bytes.
import type { ObjectId } from 'mongodb';
import { parseId } from '../domain/ids.ts';
import type { AssetDoc } from '../store/documents.ts';
import { RenderError } from './render-error.ts';

export interface LoadedAsset {
  contentType: string;
  bytes: Buffer;
}

/** Name -> asset, for one render. */
export type RenderAssets = ReadonlyMap<string, LoadedAsset>;

export interface AssetSource {
  /** Throws RenderError MISSING_ASSET naming every name the workspace lacks. */
  load(workspaceId: string, names: readonly string[]): Promise<RenderAssets>;
}

export interface AssetLoaderDeps {
  assets: { findByName(workspaceId: ObjectId, name: string): Promise<AssetDoc | null> };
  objects: { getObject(key: string): Promise<Buffer> };
  /** Bytes of asset content kept in memory. Default 64 MiB. */
  cacheBytes?: number;
}

export function createAssetLoader(deps: AssetLoaderDeps): AssetSource {
  const limit = deps.cacheBytes ?? 64 * 1024 * 1024;
  const cache = new Map<string, LoadedAsset>(); // asset id -> bytes, least recently used first
  let cached = 0;

  const remember = (id: string, asset: LoadedAsset) => {
    if (asset.bytes.length > limit) return;
    cache.set(id, asset);
    cached += asset.bytes.length;
    for (const [key, old] of cache) {
      if (cached <= limit) break;
      cache.delete(key);
      cached -= old.bytes.length;
    }
  };

  return {
    async load(workspaceId, names) {
      const workspace = parseId('workspace', workspaceId);
      if (!workspace) throw new RenderError('INTERNAL', 'Assets need the workspace of the render');
      const docs = await Promise.all(names.map((name) => deps.assets.findByName(workspace, name)));
      const missing = names.filter((_, i) => !docs[i]);
      if (missing.length > 0) {
        const list = missing.map((n) => JSON.stringify(n)).join(', ');
        throw new RenderError(
          'MISSING_ASSET',
          `The template uses asset ${list}, which the workspace does not have; upload it (docgen admin asset upload) or fix the name`,
        );
      }
      const result = new Map<string, LoadedAsset>();
      await Promise.all(
        docs.map(async (doc) => {
          const id = doc!._id.toHexString();
          let asset = cache.get(id);
          if (asset) {
            cache.delete(id); // most recently used goes last
            cache.set(id, asset);
          } else {
            asset = { contentType: doc!.contentType, bytes: await deps.objects.getObject(doc!.key) };
            remember(id, asset);
          }
          result.set(doc!.name, asset);
        }),
      );
      return result;
    },
  };
}

/** A data: URL of an asset (header/footer templates cannot load anything else). */
export function assetDataUrl(asset: LoadedAsset): string {
  return `data:${asset.contentType};base64,${asset.bytes.toString('base64')}`;
}
