// Workspaces that invited the signed-in person, waiting for their answer. An owner inviting
// someone who already has an account only offers the membership: it starts when the invited
// person accepts it here (docs/portal.md#invitations-threat-model).
import { api } from '../api.ts';
import { rememberWorkspace, ROLE_NAMES, useSession } from '../session.tsx';
import { ErrorMessage, Time, useAction } from '../ui.tsx';

export function PendingInvitations() {
  const { session, reload } = useSession();
  const action = useAction();
  if (session.pendingInvitations.length === 0) return null;
  const answer = (workspaceId: string, accept: boolean) =>
    void action.run(async () => {
      if (accept) {
        await api.sessions.acceptPendingInvitation({ workspaceId });
        rememberWorkspace(workspaceId);
      } else {
        await api.sessions.declinePendingInvitation({ workspaceId });
      }
      await reload();
    });
  return (
    <section class="card pending-invitations" aria-labelledby="pending-invitations-title">
      <h2 id="pending-invitations-title">Invitations waiting for you</h2>
      <ul>
        {session.pendingInvitations.map((invitation) => {
          const name = invitation.workspaceName || invitation.workspaceId;
          return (
            <li key={invitation.workspaceId}>
              <span>
                <strong>{name}</strong> invites you as {ROLE_NAMES[invitation.role] ?? 'member'} (open until{' '}
                <Time ts={invitation.expiresAt} />)
              </span>
              <button
                type="button"
                disabled={action.busy}
                aria-label={`Accept the invitation to ${name}`}
                onClick={() => answer(invitation.workspaceId, true)}
              >
                Accept
              </button>
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                aria-label={`Decline the invitation to ${name}`}
                onClick={() => answer(invitation.workspaceId, false)}
              >
                Decline
              </button>
            </li>
          );
        })}
      </ul>
      <ErrorMessage error={action.error} />
    </section>
  );
}
