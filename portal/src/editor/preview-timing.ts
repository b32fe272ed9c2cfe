/** How long the author's pause must be before the live preview renders (ms). */
export const PREVIEW_DEBOUNCE_MS = 350;
