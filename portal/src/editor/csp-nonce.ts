import { EditorView } from '@codemirror/view';

// The admin listener puts a fresh nonce in index.html and allows it in style-src;
// CodeMirror adds it to the style elements it creates.
const nonce = document.querySelector('meta[name="docgen-csp-nonce"]')?.getAttribute('content') ?? '';

export const cspNonce = EditorView.cspNonce.of(nonce === '__CSP_NONCE__' ? '' : nonce);
