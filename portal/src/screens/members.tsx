import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Pager, usePagedList } from '../paging.tsx';
import { ROLE_NAMES, useAbilities, useSession } from '../session.tsx';
import { ConfirmButton, ErrorMessage, Page, SecretOnce, Time, useAction } from '../ui.tsx';
import { MemberRole } from '@gen/docgen/admin/v1/identity_pb.js';

const ROLES = [MemberRole.OWNER, MemberRole.EDITOR, MemberRole.VIEWER];

export function MembersPage() {
  const { workspaceId, isOwner } = useAbilities();
  const { session } = useSession();
  const members = usePagedList((page) => api.members.listMembers({ workspaceId, ...page }), [workspaceId]);
  const pending = usePagedList((page) => api.members.listPendingInvitations({ workspaceId, ...page }), [workspaceId]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>(MemberRole.EDITOR);
  const [invite, setInvite] = useState<{ email: string; url: string } | undefined>();
  const [offered, setOffered] = useState('');
  const inviteAction = useAction();
  const rowAction = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void inviteAction.run(async () => {
      const res = await api.members.inviteMember({ workspaceId, email: email.trim(), role });
      // A link only for a brand-new account; anyone else answers the invitation signed in.
      setInvite(res.inviteUrl ? { email: email.trim(), url: res.inviteUrl } : undefined);
      setOffered(
        res.inviteUrl
          ? ''
          : res.pendingInvitation
            ? `${email.trim()} is invited: they see the invitation once signed in to docgen, and join when they accept it.`
            : `${email.trim()} is a member already; their role is now ${ROLE_NAMES[role] ?? 'changed'}.`,
      );
      setEmail('');
      members.reload();
      pending.reload();
    });
  };
  return (
    <Page title="Members">
      {isOwner ? (
        <form class="card inline-form" onSubmit={submit} aria-labelledby="invite-title">
          <h2 id="invite-title">Invite a person</h2>
          <label>
            Email
            <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            Role
            <select value={String(role)} onChange={(e) => setRole(Number(e.currentTarget.value) as MemberRole)}>
              {ROLES.map((r) => (
                <option key={r} value={String(r)}>
                  {ROLE_NAMES[r]}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={inviteAction.busy}>
            Invite member
          </button>
          <ErrorMessage error={inviteAction.error} />
        </form>
      ) : (
        <p class="notice">Only workspace owners invite people and change roles.</p>
      )}
      {offered && (
        <p class="notice" role="status">
          {offered}
        </p>
      )}
      {invite && (
        <SecretOnce
          label={`Invitation link for ${invite.email} (single use, expires in 72 hours)`}
          secret={invite.url}
          onDone={() => setInvite(undefined)}
        />
      )}
      <ErrorMessage error={members.error} />
      <ErrorMessage error={rowAction.error} />
      {members.data && (
        <table>
          <caption class="visually-hidden">Members of this workspace</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Member since</th>
              {isOwner && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {members.data.members.map((m) => {
              const user = m.user;
              const self = user?.id === session.user.id;
              return (
                <tr key={user?.id}>
                  <td>{user?.displayName || '—'}</td>
                  <td>{user?.email}</td>
                  <td>
                    {isOwner && !self ? (
                      <RoleSelect
                        who={user?.displayName ? `${user.displayName} (${user.email})` : (user?.email ?? '')}
                        email={user?.email ?? ''}
                        role={m.role}
                        disabled={rowAction.busy}
                        onChange={(next) =>
                          rowAction.run(async () => {
                            await api.members.updateMemberRole({ workspaceId, userId: user!.id, role: next });
                            members.reload();
                          })
                        }
                      />
                    ) : (
                      ROLE_NAMES[m.role]
                    )}
                  </td>
                  <td>{user?.disabled ? 'Disabled' : user?.hasPassword ? 'Active' : 'Invited'}</td>
                  <td>
                    <Time ts={m.createdAt} />
                  </td>
                  {isOwner && (
                    <td>
                      {!self && (
                        <ConfirmButton
                          label={`Remove ${user?.email}`}
                          danger
                          question={`Remove ${user?.email} from this workspace?`}
                          confirmLabel="Remove member"
                          onConfirm={() =>
                            rowAction.run(async () => {
                              await api.members.removeMember({ workspaceId, userId: user!.id });
                              members.reload();
                            })
                          }
                        />
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager list={members} rows={members.data?.members.length ?? 0} label="Members" />
      <ErrorMessage error={pending.error} />
      {pending.data && pending.data.pendingInvitations.length > 0 && (
        <section aria-labelledby="pending-title">
          <h2 id="pending-title">Invited, not answered yet</h2>
          <table>
            <caption class="visually-hidden">Invitations to people who already have an account</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Open until</th>
                {isOwner && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {pending.data.pendingInvitations.map((p) => (
                <tr key={p.email}>
                  <td>{p.email}</td>
                  <td>{ROLE_NAMES[p.role]}</td>
                  <td>
                    <Time ts={p.expiresAt} />
                  </td>
                  {isOwner && (
                    <td>
                      <ConfirmButton
                        label={`Withdraw the invitation of ${p.email}`}
                        danger
                        question={`Withdraw the invitation of ${p.email}?`}
                        confirmLabel="Withdraw invitation"
                        onConfirm={() =>
                          rowAction.run(async () => {
                            await api.members.revokePendingInvitation({ workspaceId, email: p.email });
                            pending.reload();
                          })
                        }
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </Page>
  );
}

/** What each role may do, said in the confirmation. */
const ROLE_RIGHTS: Record<number, string> = {
  [MemberRole.OWNER]: 'An owner manages everything in the workspace, members, API keys and webhook endpoints included.',
  [MemberRole.EDITOR]: 'An editor creates, edits, publishes and archives templates, and reads the rest.',
  [MemberRole.VIEWER]: 'A viewer reads only.',
};

/**
 * A member's role: choosing another one asks first, in a dialog naming the person and the new
 * role. Cancel (or Escape) puts the old role back in the list; the list gets the focus again.
 */
function RoleSelect(props: {
  who: string;
  email: string;
  role: MemberRole;
  disabled: boolean;
  onChange: (role: MemberRole) => Promise<void>;
}) {
  const [pending, setPending] = useState<MemberRole | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const select = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (pending !== undefined && !dialog.current?.open) dialog.current?.showModal();
  }, [pending]);
  const close = () => {
    dialog.current?.close();
    setPending(undefined);
    select.current?.focus();
  };
  const confirm = async () => {
    if (pending === undefined) return;
    setBusy(true);
    try {
      await props.onChange(pending);
    } finally {
      setBusy(false);
      close();
    }
  };
  const newRole = pending === undefined ? '' : (ROLE_NAMES[pending] ?? '');
  const question = `Change the role of ${props.who} to ${newRole}?`;
  return (
    <>
      <select
        ref={select}
        aria-label={`Role of ${props.email}`}
        value={String(pending ?? props.role)}
        disabled={props.disabled || busy}
        onChange={(e) => {
          const next = Number(e.currentTarget.value) as MemberRole;
          if (next !== props.role) setPending(next);
        }}
      >
        {ROLES.map((r) => (
          <option key={r} value={String(r)}>
            {ROLE_NAMES[r]}
          </option>
        ))}
      </select>
      <dialog ref={dialog} aria-label={question} onClose={() => pending !== undefined && !busy && close()}>
        <p>
          {pending !== undefined && (
            <>
              Change the role of <strong>{props.who}</strong> from {ROLE_NAMES[props.role]} to{' '}
              <strong>{newRole}</strong>? {ROLE_RIGHTS[pending]}
            </>
          )}
        </p>
        <div class="row">
          <button type="button" disabled={busy} onClick={() => void confirm()}>
            Change role
          </button>
          <button type="button" class="secondary" onClick={close}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}
