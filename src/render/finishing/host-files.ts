// Files the finishing stages read from the render host's Debian packages (the sRGB profile,
// the stamp font), read once and kept; a missing one is named with the package to install.
import { readFileSync } from 'node:fs';
import { RenderError } from '../render-error.ts';

const cache = new Map<string, Buffer>();

/** `what` says who needs it ("PDF/A needs the sRGB ICC profile"); `pkg` is the Debian package. */
export function hostFile(path: string, what: string, pkg: string): Buffer {
  let bytes = cache.get(path);
  if (!bytes) {
    try {
      bytes = readFileSync(path);
    } catch {
      throw new RenderError(
        'INTERNAL',
        `${what} ${path}, which is not installed on the render host (Debian package ${pkg})`,
      );
    }
    cache.set(path, bytes);
  }
  return bytes;
}
