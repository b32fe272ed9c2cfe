// The shell: session check, sign-in and invitation pages for visitors, and for members the
// navigation, workspace switcher and the screens. The template editor (CodeMirror, pdf.js)
// loads lazily, so the first screens stay light.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { LocationProvider, Router, Route, lazy, useLocation } from 'preact-iso';
import { api, errorText, setSignedOutHandler } from './api.ts';
import { SessionContext, pickWorkspace, rememberWorkspace, useSession, ROLE_NAMES, type Session } from './session.tsx';
import { SignInPage } from './screens/sign-in.tsx';
import { InvitationPage } from './screens/invitation.tsx';
import { TemplatesPage } from './screens/templates.tsx';
import { ApiKeysPage } from './screens/api-keys.tsx';
import { WebhooksPage } from './screens/webhooks.tsx';
import { DeliveriesPage } from './screens/deliveries.tsx';
import { GenerationsPage, GenerationDetailPage } from './screens/generations.tsx';
import { MembersPage } from './screens/members.tsx';
import { AuditPage } from './screens/audit.tsx';
import { AssetsPage } from './screens/assets.tsx';
import { PendingInvitations } from './screens/pending-invitations.tsx';
import { CertificatesPage } from './screens/certificates.tsx';
import { OverviewPage } from './screens/overview.tsx';
import { Page } from './ui.tsx';
import { Code, ConnectError } from '@connectrpc/connect';

const TemplateEditorPage = lazy(() => import('./screens/template-editor.tsx').then((m) => m.TemplateEditorPage));
const TemplateComparePage = lazy(() => import('./screens/template-compare.tsx').then((m) => m.TemplateComparePage));

type SessionState = { kind: 'loading' } | { kind: 'visitor'; error?: string } | { kind: 'member'; session: Session };

export function App() {
  return (
    <LocationProvider>
      <SessionGate />
    </LocationProvider>
  );
}

function SessionGate() {
  const [state, setState] = useState<SessionState>({ kind: 'loading' });
  const location = useLocation();

  const load = useCallback(async () => {
    try {
      const res = await api.sessions.getCurrentSession({});
      if (!res.user) return setState({ kind: 'visitor' });
      setState({
        kind: 'member',
        session: {
          user: res.user,
          memberships: res.memberships,
          workspace: pickWorkspace(res.memberships),
          pendingInvitations: res.pendingInvitations,
        },
      });
    } catch (err) {
      const unauthenticated = err instanceof ConnectError && err.code === Code.Unauthenticated;
      setState({ kind: 'visitor', ...(unauthenticated ? {} : { error: errorText(err) }) });
    }
  }, []);

  useEffect(() => {
    void load();
    setSignedOutHandler(() =>
      setState((s) => (s.kind === 'member' ? { kind: 'visitor', error: 'Your session ended; sign in again.' } : s)),
    );
  }, [load]);

  if (location.path.startsWith('/invite/')) {
    return <InvitationPage token={decodeURIComponent(location.path.slice('/invite/'.length))} onSignedIn={load} />;
  }
  if (state.kind === 'loading')
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  if (state.kind === 'visitor') return <SignInPage notice={state.error} onSignedIn={load} />;

  const value = {
    session: state.session,
    selectWorkspace(workspaceId: string) {
      rememberWorkspace(workspaceId);
      setState({
        kind: 'member',
        session: { ...state.session, workspace: state.session.memberships.find((m) => m.workspaceId === workspaceId) },
      });
    },
    signedOut() {
      setState({ kind: 'visitor' });
      location.route('/');
    },
    reload: load,
  };
  return (
    <SessionContext.Provider value={value}>
      <Shell />
    </SessionContext.Provider>
  );
}

const NAV = [
  ['/overview', 'Overview'],
  ['/templates', 'Templates'],
  ['/assets', 'Assets'],
  ['/certificates', 'Certificates'],
  ['/api-keys', 'API keys'],
  ['/webhooks', 'Webhooks'],
  ['/deliveries', 'Deliveries'],
  ['/generations', 'Generations'],
  ['/members', 'Members'],
] as const;

function Shell() {
  const { session, selectWorkspace, signedOut } = useSession();
  const { path } = useLocation();
  const [signOutError, setSignOutError] = useState('');
  const isOwner = session.workspace?.role === 1;
  const nav: Array<readonly [string, string]> = isOwner ? [...NAV, ['/audit', 'Audit log']] : [...NAV];
  const signOut = async () => {
    try {
      await api.sessions.signOut({});
      signedOut();
    } catch (err) {
      setSignOutError(errorText(err));
    }
  };
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">docgen</span>
        <nav aria-label="Main">
          <ul>
            {nav.map(([href, label]) => (
              <li key={href}>
                <a
                  href={href}
                  aria-current={
                    path === href || path.startsWith(`${href}/`) || (path === '/' && href === '/overview')
                      ? 'page'
                      : undefined
                  }
                >
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          {session.memberships.length > 1 ? (
            <label class="inline">
              <span>Workspace</span>
              <select value={session.workspace?.workspaceId} onChange={(e) => selectWorkspace(e.currentTarget.value)}>
                {session.memberships.map((m) => (
                  <option key={m.workspaceId} value={m.workspaceId}>
                    {m.workspaceName || m.workspaceId}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <span class="workspace-name">{session.workspace?.workspaceName ?? 'No workspace'}</span>
          )}
          <span class="muted" title={session.user.email}>
            {session.user.displayName || session.user.email} · {ROLE_NAMES[session.workspace?.role ?? 0] ?? 'no role'}
          </span>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      {signOutError && (
        <p class="error" role="alert">
          {signOutError}
        </p>
      )}
      <main id="main" tabIndex={-1}>
        <PendingInvitations />
        {session.workspace ? (
          <Router key={session.workspace.workspaceId}>
            <Route path="/" component={OverviewPage} />
            <Route path="/overview" component={OverviewPage} />
            <Route path="/templates" component={TemplatesPage} />
            <Route path="/templates/new" component={TemplateEditorPage} />
            <Route path="/templates/:id/compare" component={TemplateComparePage} />
            <Route path="/templates/:id" component={TemplateEditorPage} />
            <Route path="/assets" component={AssetsPage} />
            <Route path="/certificates" component={CertificatesPage} />
            <Route path="/api-keys" component={ApiKeysPage} />
            <Route path="/webhooks" component={WebhooksPage} />
            <Route path="/deliveries" component={DeliveriesPage} />
            <Route path="/generations" component={GenerationsPage} />
            <Route path="/generations/:id" component={GenerationDetailPage} />
            <Route path="/members" component={MembersPage} />
            <Route path="/audit" component={AuditPage} />
            <Route default component={NotFoundPage} />
          </Router>
        ) : (
          <Page title="No workspace">
            <p>
              You are not a member of any workspace yet.{' '}
              {session.pendingInvitations.length > 0
                ? 'Accept an invitation above to join one.'
                : 'Ask a workspace owner to invite you.'}
            </p>
          </Page>
        )}
      </main>
    </div>
  );
}

function NotFoundPage() {
  return (
    <Page title="Page not found">
      <p>
        There is nothing at this address. Go to <a href="/templates">the templates</a>.
      </p>
    </Page>
  );
}
