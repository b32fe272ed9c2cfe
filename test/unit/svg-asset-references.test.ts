// SVG assets may refer only to themselves (#fragment) or carry their data (data:image in CSS):
// every url(…) elsewhere is refused at upload, whatever attribute or quoting carries it
// (issue 32: the sanitizer does not rely on Chromium's network walls).
import { describe, expect, it } from 'vitest';
import { AssetRejected, sanitizeSvg } from '../../src/assets/asset-file.ts';

const svg = (inner: string, attrs = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"${attrs}>${inner}</svg>`;

function refusal(text: string): AssetRejected {
  try {
    sanitizeSvg('x.svg', text);
  } catch (err) {
    if (err instanceof AssetRejected) return err;
    throw err;
  }
  throw new Error(`accepted: ${text}`);
}

describe('SVG asset references', () => {
  it.each([
    ['fill', '<rect width="5" height="5" fill="url(http://127.0.0.1:9/p)"/>'],
    ['quoted fill', `<rect width="5" height="5" fill="url('https://127.0.0.1:9/p#g')"/>`],
    ['stroke', '<rect width="5" height="5" stroke="url( //127.0.0.1:9/p )"/>'],
    ['filter', '<rect width="5" height="5" filter="url(http://127.0.0.1:9/f.svg#blur)"/>'],
    ['mask', '<rect width="5" height="5" mask="url(http://127.0.0.1:9/m.svg#m)"/>'],
    ['clip-path', '<rect width="5" height="5" clip-path="url(http://127.0.0.1:9/c.svg#c)"/>'],
    ['marker-end', '<path d="M0 0L5 5" marker-end="url(http://127.0.0.1:9/k.svg#k)"/>'],
    ['CSS-escaped', '<rect width="5" height="5" fill="\\75 rl(http://127.0.0.1:9/p)"/>'],
    ['a quote inside', '<rect width="5" height="5" fill=\'url("http://127.0.0.1:9/a)b")\'/>'],
    ['style attribute', '<rect width="5" height="5" style="fill: url(http://127.0.0.1:9/p)"/>'],
    ['<style> image-set', '<style>rect { fill: image-set("http://127.0.0.1:9/i.png" 1x) }</style><rect/>'],
    ['a relative file', '<rect width="5" height="5" fill="url(other.svg#p)"/>'],
  ])('refuses url(…) out of the image: %s', (_, inner) => {
    const err = refusal(svg(inner));
    expect(err.message).toContain('x.svg references content outside itself');
  });

  it('keeps #fragment references and data:image URLs', () => {
    const ok = sanitizeSvg(
      'ok.svg',
      svg(
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/></linearGradient>' +
          '<filter id="b"><feGaussianBlur stdDeviation="1"/></filter><mask id="m"><rect width="5" height="5" fill="#fff"/></mask></defs>' +
          '<rect width="5" height="5" fill="url(#g)" filter="url( \'#b\' )" mask="url(&quot;#m&quot;)"/>' +
          '<rect width="5" height="5" style="fill: url(data:image/png;base64,iVBORw0KGgo=)"/>',
      ),
    );
    expect(ok.svg).toContain('url(#g)');
    expect(ok.svg).toContain('filter=');
  });
});
