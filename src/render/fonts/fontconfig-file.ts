// The fontconfig file docgen's Chromium reads (FONTCONFIG_FILE): the system's configuration,
// plus the everyday subsets of the CJK faces (cjk-everyday-subsets.ts), offered before the faces.
//
// When fontconfig scans a subset, it is given the face's family names and languages (computed
// from the subset's own characters, the languages would not be the face's, and fontconfig's
// language-first ordering would put other CJK fonts first), and the newest version there is:
// among fonts equal in all else fontconfig ranks the newest first. So a match by family name
// (a CSS font-family) and a match for a character the subset has both get the subset, and a
// character it lacks still finds the collection's face.

export interface SubsetEntry {
  fileName: string;
  families: readonly string[];
  /** fontconfig language tags of the face it was cut from (`ja`, `zh-cn`, ...). */
  languages: readonly string[];
}

export interface FontconfigFileInput {
  /** Absolute directory holding the subsets. */
  subsetDir: string;
  /** Absolute directory of their fontconfig cache (built with them). */
  cacheDir: string;
  subsets: readonly SubsetEntry[];
  /** The system configuration, included first (default /etc/fonts/fonts.conf). */
  systemConfig?: string;
}

/** The highest version fontconfig knows, its default for a pattern that names none. */
const NEWEST_VERSION = 2147483647;

export function fontconfigFile(input: FontconfigFileInput): string {
  const lines = [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">',
    '<!-- Made by `docgen fonts build`; do not edit, build again. -->',
    '<fontconfig>',
    // Our cache directory first: fontconfig writes new caches to the first writable one.
    `  <cachedir>${xml(input.cacheDir)}</cachedir>`,
    `  <include ignore_missing="yes">${xml(input.systemConfig ?? '/etc/fonts/fonts.conf')}</include>`,
    `  <dir>${xml(input.subsetDir)}</dir>`,
  ];
  for (const subset of input.subsets) {
    lines.push(
      '  <match target="scan">',
      `    <test name="file"><string>${xml(`${input.subsetDir}/${subset.fileName}`)}</string></test>`,
      `    <edit name="family" mode="assign_replace">${subset.families.map((f) => `<string>${xml(f)}</string>`).join('')}</edit>`,
      `    <edit name="lang" mode="assign_replace"><langset>${subset.languages.map((l) => `<string>${xml(l)}</string>`).join('')}</langset></edit>`,
      `    <edit name="fontversion" mode="assign"><int>${NEWEST_VERSION}</int></edit>`,
      '  </match>',
    );
  }
  lines.push('</fontconfig>', '');
  return lines.join('\n');
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
