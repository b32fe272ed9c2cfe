// A message for the editor that opens next (after a route change: a template just created,
// duplicated or restored), shown at its top like any other.
export interface EditorMessage {
  kind: 'ok' | 'error';
  text: string;
}

let pending: EditorMessage | undefined;

export function tellNextEditor(message: EditorMessage): void {
  pending = message;
}

export function takeNextEditorMessage(): EditorMessage | undefined {
  const message = pending;
  pending = undefined;
  return message;
}
