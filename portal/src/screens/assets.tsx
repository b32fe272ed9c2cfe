import { useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, Empty, ErrorMessage, Page, Time, useAction, TableScroll } from '../ui.tsx';

function size(bytes: bigint | number): string {
  const n = Number(bytes);
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Images and fonts templates use by name (`{{ 'logo.png' | asset_url }}`). */
export function AssetsPage() {
  const { workspaceId, canEditTemplates } = useAbilities();
  const assets = usePagedList((page) => api.assets.listAssets({ workspaceId, ...page }), [workspaceId]);
  const fileInput = useRef<HTMLInputElement>(null);
  const [name, setName] = useState('');
  const [notice, setNotice] = useState('');
  const upload = useAction();
  const remove = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void upload.run(async () => {
      const file = fileInput.current?.files?.[0];
      if (!file) throw new Error('Choose a file to upload.');
      const res = await api.assets.uploadAsset({
        workspaceId,
        name: (name.trim() || file.name).trim(),
        content: new Uint8Array(await file.arrayBuffer()),
      });
      setNotice(`Uploaded ${res.asset?.name}.${res.warnings.length ? ` ${res.warnings.join('; ')}.` : ''}`);
      setName('');
      if (fileInput.current) fileInput.current.value = '';
      assets.reload();
    });
  };
  return (
    <Page title="Assets">
      <p class="muted">
        Images and fonts for templates. Use one by name: <code>{'<img src="{{ \'logo.png\' | asset_url }}">'}</code> in
        the body, or <code>{"src: url({{ 'brand.woff2' | asset_url }})"}</code> in an @font-face rule.
      </p>
      {canEditTemplates && (
        <form class="card inline-form" onSubmit={submit} aria-labelledby="upload-title">
          <h2 id="upload-title">Upload</h2>
          <label>
            File
            <input
              type="file"
              ref={fileInput}
              accept=".png,.jpg,.jpeg,.webp,.gif,.svg,.woff2,.woff,.ttf,.otf,.pdf"
              required
            />
          </label>
          <label>
            Asset name
            <input
              type="text"
              value={name}
              placeholder="the file's name"
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={upload.busy}>
            Upload asset
          </button>
          <ErrorMessage error={upload.error} />
        </form>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorMessage error={assets.error} />
      <ErrorMessage error={remove.error} />
      {assets.data && (
        <p class="muted">
          {size(assets.data.usedBytes)} used of {size(assets.data.quotaBytes)}.
        </p>
      )}
      {assets.data && assets.data.assets.length === 0 && <Empty>No assets yet.</Empty>}
      {assets.data && assets.data.assets.length > 0 && (
        <TableScroll>
          <table>
            <caption class="visually-hidden">Assets of this workspace</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Type</th>
                <th scope="col">Size</th>
                <th scope="col">Uploaded</th>
                {canEditTemplates && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {assets.data.assets.map((a) => (
                <tr key={a.id}>
                  <td>
                    <code>{a.name}</code>
                  </td>
                  <td>{a.kind}</td>
                  <td>{a.contentType}</td>
                  <td>{size(a.sizeBytes)}</td>
                  <td>
                    <Time ts={a.createdAt} />
                  </td>
                  {canEditTemplates && (
                    <td>
                      <ConfirmButton
                        label={`Delete ${a.name}`}
                        danger
                        question={`Delete ${a.name}? Versions that use it fail to render until an asset of that name exists again.`}
                        confirmLabel="Delete asset"
                        onConfirm={() =>
                          remove.run(async () => {
                            await api.assets.deleteAsset({ id: a.id });
                            assets.reload();
                          })
                        }
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Pager list={assets} rows={assets.data?.assets.length ?? 0} label="Assets" />
    </Page>
  );
}
