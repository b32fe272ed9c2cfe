// Who is signed in, their workspaces, and the one being worked in (remembered per browser).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { MemberRole, type Membership, type PendingInvitation, type User } from '@gen/docgen/admin/v1/identity_pb.js';

export interface Session {
  user: User;
  memberships: Membership[];
  workspace: Membership | undefined;
  /** Workspaces that invited this person and wait for their answer. */
  pendingInvitations: PendingInvitation[];
}

export interface SessionContextValue {
  session: Session;
  selectWorkspace(workspaceId: string): void;
  /** Reads the session again (after joining a workspace). */
  reload(): Promise<void>;
  signedOut(): void;
}

export const SessionContext = createContext<SessionContextValue | undefined>(undefined);

export function useSession(): SessionContextValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a signed-in page');
  return value;
}

const WORKSPACE_KEY = 'docgen.workspace';

export function pickWorkspace(memberships: Membership[]): Membership | undefined {
  const remembered = localStorage.getItem(WORKSPACE_KEY);
  return memberships.find((m) => m.workspaceId === remembered) ?? memberships[0];
}

export function rememberWorkspace(workspaceId: string): void {
  localStorage.setItem(WORKSPACE_KEY, workspaceId);
}

/** What the current role may do (the server enforces the same; this only hides controls). */
export function useAbilities(): { workspaceId: string; role: MemberRole; canEditTemplates: boolean; isOwner: boolean } {
  const { session } = useSession();
  const role = session.workspace?.role ?? MemberRole.UNSPECIFIED;
  return {
    workspaceId: session.workspace?.workspaceId ?? '',
    role,
    canEditTemplates: role === MemberRole.OWNER || role === MemberRole.EDITOR,
    isOwner: role === MemberRole.OWNER,
  };
}

export const ROLE_NAMES: Record<number, string> = {
  [MemberRole.OWNER]: 'Owner',
  [MemberRole.EDITOR]: 'Editor',
  [MemberRole.VIEWER]: 'Viewer',
};
