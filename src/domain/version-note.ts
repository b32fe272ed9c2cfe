// A template version's note (docs/interface.md#templates): optional short text saved with the
// version and shown in its history. One rule for the server, the CLI and the portal's editor.

/** At most this many characters (after trimming). */
export const VERSION_NOTE_MAX_LENGTH = 500;

/** The note as stored: trimmed. */
export function normalizeVersionNote(note: string | undefined): string {
  return (note ?? '').trim();
}

/** Why the note cannot be saved, in words naming the fix; undefined when it can. */
export function versionNoteIssue(note: string | undefined): string | undefined {
  const text = normalizeVersionNote(note);
  const length = [...text].length;
  if (length > VERSION_NOTE_MAX_LENGTH)
    return `must be at most ${VERSION_NOTE_MAX_LENGTH} characters (it has ${length}); shorten it`;
  // Control characters other than line breaks and tabs would not show in the history.
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return 'must not contain control characters';
  return undefined;
}
