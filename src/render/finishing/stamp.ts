// The stamp stage: one line of text ("DRAFT", "COPY") drawn across every page or the first one,
// at an angle and an opacity, in an embedded font (PDF/A and PDF/UA accept no other) and marked
// as an artifact, so that the tagged structure and screen readers ignore it while text
// extraction (pdftotext, search) still finds it as one word.
import fontkit, { type Font as FontkitFont } from '@pdf-lib/fontkit';
import {
  beginMarkedContent,
  beginText,
  degrees,
  endMarkedContent,
  endText,
  moveText,
  popGraphicsState,
  pushGraphicsState,
  setFontAndSize,
  setTextRenderingMode,
  showText,
  TextRenderingMode,
  rgb,
  type PDFDocument,
  type PDFFont,
} from 'pdf-lib';
import { RenderError } from '../render-error.ts';
import { hostFile } from './host-files.ts';
import { STAMP_DEFAULTS, type StampSettings } from './document-settings.ts';

/** fonts-noto-core, which the render host has for Chromium already. */
export const STAMP_FONT_PATH = '/usr/share/fonts/truetype/noto/NotoSans-Bold.ttf';
const STAMP_COLOR = rgb(0.7, 0.1, 0.1);

const stampFont = () => hostFile(STAMP_FONT_PATH, 'The stamp needs the font', 'fonts-noto-core');

function checkGlyphs(font: PDFFont, text: string): void {
  const available = new Set(font.getCharacterSet());
  const missing = [...new Set([...text].filter((c) => !available.has(c.codePointAt(0)!) && c.trim() !== ''))];
  if (missing.length > 0)
    throw new RenderError(
      'INVALID_TEMPLATE',
      `stamp.text has characters the stamp font (Noto Sans) cannot draw: ${missing.join(' ')}; use Latin, Greek or Cyrillic letters`,
    );
}

let parsed: FontkitFont | undefined;
function stampOutlines(): FontkitFont {
  parsed ??= fontkit.create(stampFont());
  return parsed;
}

type PathCommand = { command: string; args: number[] };

/**
 * The text as one SVG path in font units, y pointing down as SVG has it (pdf-lib's
 * drawSvgPath turns it back), laid out by fontkit (kerning, ligatures).
 */
function svgOutline(font: FontkitFont, text: string): string {
  const run = font.layout(text);
  let pen = 0;
  const parts: string[] = [];
  run.glyphs.forEach((glyph, i) => {
    const position = run.positions[i]!;
    const dx = pen + position.xOffset;
    const dy = position.yOffset;
    const point = (px: number, py: number) => `${(px + dx).toFixed(2)} ${(-(py + dy)).toFixed(2)}`;
    for (const { command, args } of (glyph.path as unknown as { commands: PathCommand[] }).commands) {
      const pairs: string[] = [];
      for (let k = 0; k + 1 < args.length; k += 2) pairs.push(point(args[k]!, args[k + 1]!));
      const letter = { moveTo: 'M', lineTo: 'L', quadraticCurveTo: 'Q', bezierCurveTo: 'C', closePath: 'Z' }[command];
      if (letter) parts.push(`${letter}${pairs.join(' ')}`);
    }
    pen += position.xAdvance;
  });
  return parts.join(' ');
}

/**
 * fontkit as pdf-lib takes it (its public registerFontkit), handing out the stamp font parsed
 * once per process: parsing Noto Sans Bold is most of a stamp's time otherwise. pdf-lib makes
 * its own subset per document from the parsed font and does not change it.
 */
const sharedFontkit = {
  create: (bytes: Uint8Array) => (bytes === stampFont() ? stampOutlines() : fontkit.create(bytes)),
} as unknown as typeof fontkit;

/** The text every page of a test generation carries (docs/interface.md#test-mode). */
export const TEST_STAMP_TEXT = 'TEST';

/**
 * A test generation's stamp: "TEST" over every page, more opaque than a default stamp so that
 * a test document is never mistaken for a real one. When the version stamps its own text along
 * the same angle, TEST crosses it instead of covering it.
 */
export function testStampFor(versionStamp: StampSettings | null | undefined): StampSettings {
  const ownAngle = versionStamp ? (versionStamp.angle ?? STAMP_DEFAULTS.angle) : undefined;
  const angle = ownAngle === STAMP_DEFAULTS.angle ? -STAMP_DEFAULTS.angle : STAMP_DEFAULTS.angle;
  return { text: TEST_STAMP_TEXT, opacity: 0.3, angle, firstPageOnly: false };
}

export async function drawStamp(doc: PDFDocument, stamp: StampSettings): Promise<void> {
  doc.registerFontkit(sharedFontkit);
  const font = await doc.embedFont(stampFont(), { subset: true });
  checkGlyphs(font, stamp.text);
  const opacity = stamp.opacity ?? STAMP_DEFAULTS.opacity;
  const angle = stamp.angle ?? STAMP_DEFAULTS.angle;
  const pages = doc.getPages();
  const targets = (stamp.firstPageOnly ?? STAMP_DEFAULTS.firstPageOnly) ? pages.slice(0, 1) : pages;
  const rad = (angle * Math.PI) / 180;
  const outlines = stampOutlines();
  const outline = svgOutline(outlines, stamp.text);
  for (const page of targets) {
    const { width, height } = page.getSize();
    // As large as fits along the angle, within 60 % of the page's reach that way, up to 120 pt.
    const reach =
      Math.abs(Math.cos(rad)) < 1e-6
        ? height
        : Math.abs(Math.sin(rad)) < 1e-6
          ? width
          : Math.min(width / Math.abs(Math.cos(rad)), height / Math.abs(Math.sin(rad)));
    const size = Math.max(8, Math.min(120, (0.6 * reach) / Math.max(font.widthOfTextAtSize(stamp.text, 1), 1e-6)));
    const textWidth = font.widthOfTextAtSize(stamp.text, size);
    const half = font.heightAtSize(size, { descender: false }) / 2;
    // The text's middle at the page's middle: its baseline origin moved back along the angle.
    const x = width / 2 - (textWidth / 2) * Math.cos(rad) + half * Math.sin(rad);
    const y = height / 2 - (textWidth / 2) * Math.sin(rad) - half * Math.cos(rad);
    // Text extraction cannot join glyphs on a slant (pdftotext gives one letter a line): the
    // visible stamp is drawn as the glyphs' outlines, and an invisible horizontal line of text
    // (rendering mode 3, as OCR layers do) is what extraction and search find.
    page.pushOperators(
      beginMarkedContent('Artifact'),
      pushGraphicsState(),
      beginText(),
      setFontAndSize(page.node.newFontDictionary(font.name, font.ref), size / 4),
      setTextRenderingMode(TextRenderingMode.Invisible),
      moveText(width / 2 - font.widthOfTextAtSize(stamp.text, size / 4) / 2, height / 2),
      showText(font.encodeText(stamp.text)),
      endText(),
      popGraphicsState(),
      endMarkedContent(),
      beginMarkedContent('Artifact'),
    );
    page.drawSvgPath(outline, {
      x,
      y,
      scale: size / outlines.unitsPerEm,
      rotate: degrees(angle),
      color: STAMP_COLOR,
      opacity,
    });
    page.pushOperators(endMarkedContent());
  }
}
