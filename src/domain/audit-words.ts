// THE rule that tells an audit event in words: "published version 3 of Invoice", "invited
// bob@example.com as editor", "revoked the API key CI (svc_live_ab12…)". One home for the
// server (ListAuditEvents' `summary`), the CLI (`docgen admin audit list`) and the portal (the
// audit log, where the target becomes a link). Bundled into the portal too: it imports nothing
// and uses no Node globals.
//
// What an event carries to be told: its action (an operation such as `templates.publish`; older
// events the RPC's name, `TemplateService.PublishTemplateVersion`), its target id, the facts
// recorded at the time (`version`, `templateName`, `email`, `role`…) and its free-text detail.
// Older events without facts degrade to the detail they have ("version 3", "bob@x as role
// editor") and the target's current name, and never to an RPC's name.

/** The operations that change state, i.e. what the audit trail records, with a label for filters. */
export const AUDIT_ACTIONS = {
  'workspaces.create': 'Created a workspace',
  'workspaces.update': 'Changed workspace settings',
  'apiKeys.create': 'Created an API key',
  'apiKeys.revoke': 'Revoked an API key',
  'templates.create': 'Created a template',
  'templates.addVersion': 'Saved a template version',
  'templates.publish': 'Published a template version',
  'templates.archive': 'Archived a template',
  // Template management (issue #31, branch tmpl-manage): told here so that they read in words
  // from the moment they are recorded.
  'templates.rename': 'Renamed a template',
  'templates.unarchive': 'Restored an archived template',
  'templates.delete': 'Deleted a template',
  'webhookEndpoints.create': 'Added a webhook endpoint',
  'webhookEndpoints.delete': 'Deleted a webhook endpoint',
  'webhookEndpoints.rotateSecret': 'Rotated a webhook signing secret',
  'webhookEndpoints.sendTestEvent': 'Sent a webhook test event',
  'deliveries.redeliver': 'Redelivered a webhook delivery',
  'assets.upload': 'Uploaded an asset',
  'assets.delete': 'Deleted an asset',
  'certificates.upload': 'Uploaded a signing certificate',
  'certificates.delete': 'Deleted a signing certificate',
  'generations.delete': 'Deleted a generation',
  'generations.renderAgain': 'Rendered a generation again',
  'sessions.signIn': 'Signed in',
  'sessions.signOut': 'Signed out',
  'sessions.acceptInvitation': 'Accepted an invitation link',
  'sessions.acceptPendingInvitation': 'Joined a workspace',
  'sessions.declinePendingInvitation': 'Declined an invitation',
  'users.invite': 'Invited a user (operator)',
  'users.disable': 'Disabled an account',
  'users.enable': 'Enabled an account',
  'users.reset': 'Reset an account',
  'members.invite': 'Invited a member',
  'members.updateRole': "Changed a member's role",
  'members.remove': 'Removed a member',
  'members.revokePendingInvitation': 'Withdrew an invitation',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export function isAuditAction(action: string): action is AuditAction {
  return Object.hasOwn(AUDIT_ACTIONS, action);
}

/** What a target id names, by its prefix (src/domain/ids.ts). */
export type AuditTargetKind =
  | 'template'
  | 'apiKey'
  | 'webhookEndpoint'
  | 'delivery'
  | 'asset'
  | 'certificate'
  | 'generation'
  | 'user'
  | 'workspace'
  | 'batch';

const KIND_PREFIXES: ReadonlyArray<readonly [string, AuditTargetKind]> = [
  ['tpl_', 'template'],
  ['key_', 'apiKey'],
  ['whe_', 'webhookEndpoint'],
  ['dlv_', 'delivery'],
  ['ast_', 'asset'],
  ['crt_', 'certificate'],
  ['gen_', 'generation'],
  ['usr_', 'user'],
  ['ws_', 'workspace'],
  ['bat_', 'batch'],
];

/** The kind of object a target id names; undefined for none (`''`, `operator`) or an unknown one. */
export function auditTargetKind(targetId: string): AuditTargetKind | undefined {
  return KIND_PREFIXES.find(([prefix]) => targetId.startsWith(prefix))?.[1];
}

/** The words for a kind of object ("the API key …"), used when its name is unknown too. */
const KIND_WORDS: Record<AuditTargetKind, string> = {
  template: 'template',
  apiKey: 'API key',
  webhookEndpoint: 'webhook endpoint',
  delivery: 'webhook delivery',
  asset: 'asset',
  certificate: 'signing certificate',
  generation: 'generation',
  user: 'account',
  workspace: 'workspace',
  batch: 'batch',
};

export interface AuditEventToTell {
  action: string;
  targetId: string;
  detail: string;
  /** Recorded with the event (empty for older events). */
  facts: Readonly<Record<string, string>>;
  /** The target's name (recorded, or looked up now); '' when unknown. */
  targetName: string;
}

/** A piece of the sentence: plain words, or the target (a link in the portal). */
export type AuditWordPart = string | { text: string; targetId: string; kind: AuditTargetKind };

export interface AuditWords {
  /** The sentence without the actor, e.g. "published version 3 of Invoice". */
  text: string;
  parts: AuditWordPart[];
}

/**
 * Older events carry the RPC instead of the operation. `rpcs` maps `Service.Method` to the
 * operation (src/rpc/admin-rpc-map.ts knows them); an RPC it does not know is told from its name.
 */
export function auditActionOf(action: string, rpcs?: ReadonlyMap<string, string>): string {
  return rpcs?.get(action) ?? action;
}

/** Tells the event in words. */
export function auditEventInWords(event: AuditEventToTell): AuditWords {
  const parts = sentence(event);
  const text = parts.map((p) => (typeof p === 'string' ? p : p.text)).join('');
  return { text, parts };
}

const ROLE_WORDS: Record<string, string> = { owner: 'owner', editor: 'editor', viewer: 'viewer' };

function sentence(e: AuditEventToTell): AuditWordPart[] {
  const kind = auditTargetKind(e.targetId);
  const facts = e.facts;
  // The target, named as well as the event allows: its name, else "the <kind> <id>".
  const target = (fallbackName = ''): AuditWordPart => {
    const name = e.targetName || fallbackName;
    if (!kind) return name || 'something';
    return { text: name || `the ${KIND_WORDS[kind]} ${e.targetId}`, targetId: e.targetId, kind };
  };
  // "archived the template Invoice", or "archived the template tpl_…" when no name is known.
  const theKind = (verb: string, kindWords: string): AuditWordPart[] => {
    if (!kind) return [`${verb} a ${kindWords}`];
    return [`${verb} the ${kindWords} `, { text: e.targetName || e.targetId, targetId: e.targetId, kind }];
  };
  const version = facts.version || /\bversion (\d+)\b/.exec(e.detail)?.[1] || '';
  const role = ROLE_WORDS[facts.role ?? ''] ?? /\brole (owner|editor|viewer)\b/.exec(e.detail)?.[1] ?? '';
  const email = facts.email || /^(\S+@\S+)/.exec(e.detail)?.[1] || '';
  switch (e.action as AuditAction) {
    case 'templates.publish':
      return version ? [`published version ${version} of `, target()] : ['published a version of ', target()];
    case 'templates.addVersion': {
      const published = facts.published === 'true' || e.detail === 'published';
      const saved: AuditWordPart[] = version
        ? [`saved version ${version} of `, target()]
        : ['saved a new version of ', target()];
      return published ? [...saved, ' and published it'] : saved;
    }
    case 'templates.create':
      return [
        ...theKind('created', 'template'),
        facts.fromGallery || /^from gallery /.test(e.detail) ? ' from the gallery' : '',
      ].filter((p) => p !== '');
    case 'templates.archive':
      return theKind('archived', 'template');
    case 'templates.rename':
      return facts.previousName
        ? [`renamed the template ${facts.previousName} to `, target()]
        : theKind('renamed', 'template');
    case 'templates.unarchive':
      return theKind('restored', 'template');
    case 'templates.delete':
      return theKind('deleted', 'template');
    case 'apiKeys.create':
      return theKind('created', 'API key');
    case 'apiKeys.revoke':
      return theKind('revoked', 'API key');
    case 'webhookEndpoints.create':
      return theKind('added', 'webhook endpoint');
    case 'webhookEndpoints.delete':
      return theKind('deleted', 'webhook endpoint');
    case 'webhookEndpoints.rotateSecret':
      return ['rotated the signing secret of ', target()];
    case 'webhookEndpoints.sendTestEvent':
      return ['sent a test event to ', target()];
    case 'deliveries.redeliver':
      return ['redelivered ', target()];
    case 'assets.upload':
      return theKind('uploaded', 'asset');
    case 'assets.delete':
      return theKind('deleted', 'asset');
    case 'certificates.upload':
      return theKind('uploaded', 'signing certificate');
    case 'certificates.delete':
      return theKind('deleted', 'signing certificate');
    case 'generations.delete':
      return ['deleted ', target()];
    case 'generations.renderAgain': {
      const from = facts.from || /^again from (\S+)/.exec(e.detail)?.[1] || '';
      return from ? [`rendered ${from} again as `, target()] : ['rendered again as ', target()];
    }
    case 'workspaces.create':
      return theKind('created', 'workspace');
    case 'workspaces.update':
      return theKind('changed the settings of', 'workspace');
    case 'sessions.signIn':
      return ['signed in'];
    case 'sessions.signOut':
      return ['signed out'];
    case 'sessions.acceptInvitation':
      return ['accepted an invitation and set a password'];
    case 'sessions.acceptPendingInvitation':
      return ['joined the workspace ', target()];
    case 'sessions.declinePendingInvitation':
      return ['declined the invitation to ', target()];
    case 'users.invite':
    case 'members.invite': {
      const who = target(email);
      return role ? ['invited ', who, ` as ${role}`] : ['invited ', who];
    }
    case 'users.disable':
      return ['disabled the account of ', target()];
    case 'users.enable':
      return ['enabled the account of ', target()];
    case 'users.reset':
      return ['reset the account of ', target(), ' (a new invitation link)'];
    case 'members.updateRole':
      return role ? ['changed the role of ', target(), ` to ${role}`] : ['changed the role of ', target()];
    case 'members.remove':
      return ['removed ', target(), ' from the workspace'];
    case 'members.revokePendingInvitation':
      return [`withdrew the invitation of ${email || 'someone'}`];
    default:
      return unknownAction(e, kind ? target() : undefined);
  }
}

/**
 * An action this rule does not know (a newer docgen's, or an RPC's name never mapped): its
 * name split into words, "Service.PublishTemplateVersion" → "publish template version".
 */
function unknownAction(e: AuditEventToTell, target: AuditWordPart | undefined): AuditWordPart[] {
  const name = e.action.includes('.') ? e.action.slice(e.action.lastIndexOf('.') + 1) : e.action;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  const prefix = e.action.includes('.') && /^[a-z]/.test(e.action) ? e.action.slice(0, e.action.indexOf('.')) : '';
  const said = prefix && !/Service$/.test(prefix) ? `${words} (${splitWords(prefix)})` : words;
  return target ? [`${said || 'changed'} `, target] : [said || 'changed something'];
}

function splitWords(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

/** How an API key is named in the trail: "CI (svc_live_ab12…)"; never more of the key than its prefix. */
export function auditApiKeyName(name: string, prefix: string): string {
  return name && prefix ? `${name} (${prefix}…)` : name || (prefix ? `${prefix}…` : '');
}

/** How the person who acted is shown: "Ada Lovelace (ada@example.com)", the email, or the id. */
export function auditActorInWords(actor: { id: string; email: string; displayName: string }): string {
  if (actor.id === 'operator') return 'The operator (admin token)';
  if (actor.id === 'anonymous' || actor.id === '') return 'Someone not signed in';
  if (actor.displayName && actor.email) return `${actor.displayName} (${actor.email})`;
  return actor.email || `account ${actor.id} (removed)`;
}
