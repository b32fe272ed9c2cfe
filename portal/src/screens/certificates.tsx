import { useRef, useState } from 'preact/hooks';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { api, listAll, type PageRequest } from '../api.ts';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, Empty, ErrorMessage, Page, Time, useAction, useLoad, TableScroll } from '../ui.tsx';

/** Whether a certificate can still sign today. */
function expired(notAfter: Timestamp | undefined): boolean {
  return notAfter !== undefined && Number(notAfter.seconds) * 1000 < Date.now();
}

/**
 * Signing certificates (PKCS#12) that templates sign their PDFs with (Document standards →
 * Signature). The key is stored encrypted and never shown; the password is used once.
 */
export function CertificatesPage() {
  const { workspaceId, canEditTemplates } = useAbilities();
  const certificates = useLoad(
    () => listAll((page: PageRequest) => api.certificates.listCertificates({ workspaceId, ...page }), 'certificates'),
    [workspaceId],
  );
  const fileInput = useRef<HTMLInputElement>(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [notice, setNotice] = useState('');
  const upload = useAction();
  const remove = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void upload.run(async () => {
      const file = fileInput.current?.files?.[0];
      if (!file) throw new Error('Choose a PKCS#12 file (.p12 or .pfx) to upload.');
      const res = await api.certificates.uploadCertificate({
        workspaceId,
        name: name.trim() || file.name.replace(/\.(p12|pfx)$/i, ''),
        pkcs12: new Uint8Array(await file.arrayBuffer()),
        password,
      });
      setNotice(`Uploaded ${res.certificate?.name} (${res.certificate?.id}).`);
      setName('');
      setPassword('');
      if (fileInput.current) fileInput.current.value = '';
      certificates.reload();
    });
  };
  return (
    <Page title="Certificates">
      <p class="muted">
        Certificates that templates sign their PDFs with (PAdES). Upload a PKCS#12 file with the private key; the key is
        stored encrypted and never shown again, and the password is not kept.
      </p>
      {canEditTemplates && (
        <form class="card inline-form" onSubmit={submit} aria-labelledby="certificate-upload-title">
          <h2 id="certificate-upload-title">Upload</h2>
          <label>
            Certificate file
            <input type="file" ref={fileInput} accept=".p12,.pfx,application/x-pkcs12" required />
          </label>
          <label>
            Certificate name
            <input
              type="text"
              value={name}
              placeholder="the file's name"
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <label>
            Certificate password
            <input
              type="password"
              autocomplete="off"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={upload.busy}>
            Upload certificate
          </button>
          <ErrorMessage error={upload.error} />
        </form>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorMessage error={certificates.error} />
      <ErrorMessage error={remove.error} />
      {certificates.data && certificates.data.certificates.length === 0 && <Empty>No certificates yet.</Empty>}
      {certificates.data && certificates.data.certificates.length > 0 && (
        <TableScroll>
          <table>
            <caption class="visually-hidden">Signing certificates of this workspace</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Subject</th>
                <th scope="col">Issuer</th>
                <th scope="col">Valid from</th>
                <th scope="col">Valid until</th>
                <th scope="col">Id</th>
                {canEditTemplates && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {certificates.data.certificates.map((c) => (
                <tr key={c.id}>
                  <td>{c.name}</td>
                  <td>{c.subject}</td>
                  <td>{c.issuer}</td>
                  <td>
                    <Time ts={c.notBefore} />
                  </td>
                  <td>
                    <Time ts={c.notAfter} />
                    {expired(c.notAfter) && <strong class="expired"> expired</strong>}
                  </td>
                  <td>
                    <code>{c.id}</code>
                  </td>
                  {canEditTemplates && (
                    <td>
                      <ConfirmButton
                        label={`Delete ${c.name}`}
                        danger
                        question={`Delete ${c.name}? Templates that sign with it fail to render until they name another certificate.`}
                        confirmLabel="Delete certificate"
                        onConfirm={() =>
                          remove.run(async () => {
                            await api.certificates.deleteCertificate({ id: c.id });
                            certificates.reload();
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
    </Page>
  );
}
