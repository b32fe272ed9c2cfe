import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api.ts';
import { ErrorMessage, formatTime, useAction, useLoad } from '../ui.tsx';

/**
 * `/invite/<token>`: the invited person sees which address the link is for, chooses a password
 * and is signed in. The server names the address only for a link that still works
 * (SessionService/GetInvitation); any other link says it is invalid, and nothing else.
 */
export function InvitationPage({ token, onSignedIn }: { token: string; onSignedIn: () => Promise<void> }) {
  const [displayName, setDisplayName] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const action = useAction();
  const location = useLocation();
  const invitation = useLoad(() => api.sessions.getInvitation({ token }), [token]);
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      if (password !== repeat) throw new Error('The two passwords differ; type the same password twice.');
      if (password.length < 12) throw new Error('The password needs at least 12 characters.');
      await api.sessions.acceptInvitation({ token, password, displayName });
      location.route('/templates', true);
      await onSignedIn();
    });
  };
  if (invitation.loading && !invitation.data)
    return (
      <main class="visitor" id="main">
        <p class="card" role="status">
          Opening your invitation…
        </p>
      </main>
    );
  if (!invitation.data)
    return (
      <main class="visitor" id="main">
        <section class="card" aria-labelledby="invite-title">
          <h1 id="invite-title">Invitation link not valid</h1>
          <ErrorMessage error={invitation.error} />
          <p>
            Ask whoever invited you for a new link, or <a href="/">sign in</a> if you have set your password already.
          </p>
        </section>
      </main>
    );
  const { email, expiresAt } = invitation.data;
  return (
    <main class="visitor" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="invite-title">
        <h1 id="invite-title">Accept your invitation</h1>
        <p>
          This invitation is for <strong data-invited-email>{email}</strong>. Choose a password to finish setting up
          your docgen account{expiresAt ? ` (the link works until ${formatTime(expiresAt)})` : ''}.
        </p>
        {/* The address as the account's user name, for password managers; not editable. */}
        <label>
          Email
          <input type="email" name="email" autoComplete="username" value={email} readOnly />
        </label>
        <label>
          Your name
          <input
            type="text"
            name="name"
            autoComplete="name"
            value={displayName}
            onInput={(e) => setDisplayName(e.currentTarget.value)}
          />
        </label>
        <label>
          New password
          <input
            type="password"
            name="new-password"
            autoComplete="new-password"
            required
            minLength={12}
            aria-describedby="password-rule"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <p id="password-rule" class="muted">
          At least 12 characters; not a common password.
        </p>
        <label>
          Repeat password
          <input
            type="password"
            name="repeat-password"
            autoComplete="new-password"
            required
            value={repeat}
            onInput={(e) => setRepeat(e.currentTarget.value)}
          />
        </label>
        <ErrorMessage error={action.error} />
        <button type="submit" disabled={action.busy}>
          Set password
        </button>
      </form>
    </main>
  );
}
