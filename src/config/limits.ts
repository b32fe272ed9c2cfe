// Size limits that more than one part of docgen applies, each written once. Where a
// configuration variable can change a limit, this is its default (config.ts's table reads it
// from here, and so does the README's); the parts that take the limit as an option default
// to the same figure, so a hand-built configuration behaves like the service.
// (The document settings' limits, which the portal checks too, live in
// src/domain/document-settings.ts.)

const MiB = 1024 * 1024;

/**
 * Largest rendered HTML document Chromium is asked to print (DOCGEN_RENDER_MAX_HTML_BYTES); a
 * bigger one fails permanently at once (DOCUMENT_TOO_LARGE).
 */
export const DEFAULT_MAX_HTML_BYTES = 2 * MiB;

/**
 * An answer sent before a request's body was read (413, 404, a refused upload) is followed by
 * reading and dropping the rest of the body, so that closing the connection does not reset it
 * and lose the answer; past this many bytes the connection is cut instead. Both listeners (the
 * REST gateway and the Connect server) drain this much.
 */
export const UNREAD_BODY_DISCARD_LIMIT_BYTES = 64 * MiB;

/**
 * Largest request body of the session RPCs (SignIn, AcceptInvitation, …), which anyone may
 * call without a credential: an email, a password of at most 256 characters, a token. Bigger
 * bodies are refused from their Content-Length (or as soon as they pass it) before anything is
 * parsed; the admin listener's other calls keep their larger limit (asset uploads).
 */
export const SESSION_RPC_MAX_BODY_BYTES = 64 * 1024;

/**
 * Most items one batch may hold (`POST /v1/batches`, DOCGEN_BATCH_MAX_ITEMS). Every item is a
 * generation row written by the create request, and the batch counts items by index in one
 * document, so this also bounds that document and the request's time.
 */
export const DEFAULT_MAX_BATCH_ITEMS = 1000;

/**
 * How old a batch whose create never stored every item must be before the render role's sweeper
 * finishes it (DOCGEN_BATCH_CREATION_GRACE_MS): a create that is merely slow is still running.
 */
export const DEFAULT_BATCH_CREATION_GRACE_MS = 60_000;
