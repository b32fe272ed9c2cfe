// A template's management controls beside the editor (#31): rename, unarchive (owners),
// delete (a used template is archived instead), and how each version's author reads.
import { useRef, useState } from 'preact/hooks';
import { TemplateVersionAuthorKind, type TemplateVersionAuthor } from '@gen/docgen/admin/v1/template_pb.js';

/** "Rename": a dialog asking for the new name. */
export function RenameButton({ name, onRename }: { name: string; onRename: (name: string) => Promise<void> }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [value, setValue] = useState(name);
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={() => {
          setValue(name);
          dialog.current?.showModal();
        }}
      >
        Rename
      </button>
      <dialog ref={dialog} aria-labelledby="rename-title">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            dialog.current?.close();
            void onRename(value.trim());
          }}
        >
          <h2 id="rename-title">Rename “{name}”</h2>
          <label>
            New name
            <input type="text" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          </label>
          <div class="row">
            <button type="submit">Rename template</button>
            <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Who saved a version, in words: a member's name and email, the operator, or not recorded. */
export function VersionAuthor({ author }: { author: TemplateVersionAuthor | undefined }) {
  if (author?.kind === TemplateVersionAuthorKind.OPERATOR) return <span>Operator (automation)</span>;
  if (author?.kind !== TemplateVersionAuthorKind.MEMBER) return <span class="muted">Not recorded</span>;
  if (!author.email) return <code>{author.userId}</code>;
  return (
    <span class="version-author">
      {author.name && <span>{author.name}</span>}
      <span class="muted">{author.email}</span>
    </span>
  );
}
