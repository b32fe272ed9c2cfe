// How docgen makes CJK documents print fast: a small font file per face of a CJK collection,
// holding the face's everyday characters, which fontconfig offers before the collection.
//
// Chromium's PDF backend reads a document's font files whole, several times per document, so
// the cost grows with the file (measured per page: about 20 ms with a 170 KB CJK font, 45 ms
// with 8 MB, 70 ms with a whole 16 MB face, 80 ms with the 19.5 MB collection;
// docs/architecture.md#print-path). The everyday file of a face holds Latin, kana, punctuation,
// full-width forms and the characters of the face's national standard (JIS X 0208 with
// Windows' additions for JP, GB 2312 for SC, Big5 for TC, Big5 with HKSCS for HK, KS X 1001
// for KR), cut from the face with its own outlines and layout tables.
// - Everyday text is set in that one file, so it is shaped exactly as the collection shapes it
//   (kerning, spacing, vertical forms) and looks the same; a CSS font-family naming the face
//   gets the file too (fontconfig-file.ts).
// - A character outside it comes from the collection, as before, at the collection's cost.
// - Each face is cut on its own: the regional faces share glyph outlines but not their
//   positioning tables, so a file shared by two faces would space text like one of them only.
// - Monospace faces are left whole: they are rarely used, and the disk stays at about 118 MB.

export type CjkRegion = 'JP' | 'KR' | 'SC' | 'TC' | 'HK';

export interface CollectionFace {
  /** Family name, as fontconfig reports it (`Noto Sans CJK JP`). */
  family: string;
  /** The face's characters. */
  codepoints: Iterable<number>;
}

export interface EverydaySubset {
  /** File name, unique within the output directory. */
  fileName: string;
  /** The face it is cut from. */
  faceIndex: number;
  /** Its characters, ascending. */
  codepoints: number[];
}

/** The region a face is for, from its family name (`Noto Serif CJK TC` is TC). */
export function regionOf(family: string): CjkRegion | undefined {
  return /\bCJK (JP|KR|SC|TC|HK)\b/.exec(family)?.[1] as CjkRegion | undefined;
}

/** One everyday subset per proportional regional face of a collection (`<stem>.f<face>.otf`). */
export function planEverydaySubsets(faces: readonly CollectionFace[], stem: string): EverydaySubset[] {
  const plans: EverydaySubset[] = [];
  faces.forEach((face, faceIndex) => {
    const region = regionOf(face.family);
    if (!region || /\bMono\b/.test(face.family)) return;
    const standard = nationalStandard(region);
    const codepoints = [...face.codepoints].filter((c) => isEveryday(c) || standard.has(c)).sort((a, b) => a - b);
    if (codepoints.length > 0)
      plans.push({ fileName: `${stem}.f${String(faceIndex).padStart(2, '0')}.otf`, faceIndex, codepoints });
  });
  return plans;
}

/** Latin, Greek, Cyrillic, symbols, CJK punctuation, kana, bopomofo and full-width forms. */
function isEveryday(codepoint: number): boolean {
  return codepoint < 0x3130 || (codepoint >= 0xff00 && codepoint <= 0xffef);
}

const standards = new Map<CjkRegion, ReadonlySet<number>>();

/** The characters of a region's national standard, decoded from its legacy encoding by the
 * runtime's own TextDecoder (WHATWG encodings), so no character tables ship with docgen. */
export function nationalStandard(region: CjkRegion): ReadonlySet<number> {
  let set = standards.get(region);
  if (!set) {
    const chars = new Set<number>();
    const euc: Array<[number, number]> = [[0xa1, 0xfe]];
    switch (region) {
      case 'JP':
        decodeInto(chars, 'euc-jp', [0xa1, 0xfe], euc); // JIS X 0208
        decodeInto(
          chars,
          'shift_jis',
          [0xed, 0xfc],
          [
            [0x40, 0x7e],
            [0x80, 0xfc],
          ],
        ); // NEC and IBM additions (髙, 﨑)
        break;
      case 'SC':
        decodeInto(chars, 'gbk', [0xa1, 0xf7], euc); // GB 2312
        break;
      case 'TC':
        decodeInto(
          chars,
          'big5',
          [0xa1, 0xf9],
          [
            [0x40, 0x7e],
            [0xa1, 0xfe],
          ],
        ); // Big5
        break;
      case 'HK':
        decodeInto(
          chars,
          'big5',
          [0x87, 0xfe],
          [
            [0x40, 0x7e],
            [0xa1, 0xfe],
          ],
        ); // Big5 and HKSCS
        break;
      case 'KR':
        decodeInto(chars, 'euc-kr', [0xa1, 0xfe], euc); // KS X 1001
        break;
    }
    set = chars;
    standards.set(region, set);
  }
  return set;
}

function decodeInto(
  set: Set<number>,
  encoding: string,
  leads: [number, number],
  trails: Array<[number, number]>,
): void {
  const decoder = new TextDecoder(encoding);
  const bytes = new Uint8Array(2);
  for (let lead = leads[0]; lead <= leads[1]; lead += 1) {
    for (const [from, to] of trails) {
      for (let trail = from; trail <= to; trail += 1) {
        bytes[0] = lead;
        bytes[1] = trail;
        const chars = [...decoder.decode(bytes)];
        // A byte pair of the set decodes to exactly one character; anything else is unmapped.
        const codepoint = chars.length === 1 ? chars[0]!.codePointAt(0)! : 0xfffd;
        if (codepoint !== 0xfffd && codepoint > 0x7f) set.add(codepoint);
      }
    }
  }
}
