import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorMessage, useAction } from '../ui.tsx';

export function SignInPage({ notice, onSignedIn }: { notice?: string | undefined; onSignedIn: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.sessions.signIn({ email, password });
      await onSignedIn();
    });
  };
  return (
    <main class="visitor" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to docgen</h1>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <label>
          Email
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <ErrorMessage error={action.error} />
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
        <p class="muted">New here? Open the invitation link a workspace owner sent you.</p>
      </form>
    </main>
  );
}
