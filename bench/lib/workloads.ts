// "Cost as work grows" workloads: a tabular report whose size is set exactly by its variables
// (`pages` pages of `rowsPerPage` rows, an explicit page break after each page's table), so the
// benchmarks can report how render time grows with pages and with rows per page.
//   normal: 25 rows per page in 9 pt, like a long invoice or statement;
//   dense:  200 rows per page in 3 pt, the data-heavy extreme.
import { PDFDocument } from 'pdf-lib';
import { type JsonObject, type TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';

export interface Workload {
  /** Short name for rows: `20 pages x 25 rows`. */
  name: string;
  pages: number;
  rowsPerPage: number;
  content: TemplateVersionContent;
  variables: JsonObject;
}

const BODY = `<h1>{{ title }}</h1>
{% for page in pages %}<table class="{% if dense %}dense{% endif %}">
<thead><tr><th>#</th><th>Item</th><th>Account</th><th>Quantity</th><th>Amount</th></tr></thead>
<tbody>{% for row in page.rows %}<tr><td>{{ row.n }}</td><td>{{ row.item | escape }}</td><td>{{ row.account }}</td><td>{{ row.quantity }}</td><td>{{ row.amount | times: 1.19 | round: 2 }}</td></tr>{% endfor %}</tbody>
</table>{% unless forloop.last %}<div class="page-break"></div>{% endunless %}{% endfor %}`;

const CSS = `body { font-family: sans-serif; font-size: 9pt; margin: 0; }
h1 { font-size: 12pt; margin: 0 0 2mm; }
table { width: 100%; border-collapse: collapse; }
td, th { padding: 0.6mm 1mm; border-bottom: 0.2pt solid #ccc; text-align: left; }
table.dense { table-layout: fixed; }
table.dense td, table.dense th { font-size: 3pt; line-height: 1.1mm; height: 1.1mm; padding: 0 1mm; border: 0; white-space: nowrap; overflow: hidden; }
.page-break { break-after: page; }`;

function content(): TemplateVersionContent {
  return {
    body: BODY,
    css: CSS,
    partials: {},
    variables: [
      { name: 'title', required: true, description: 'Heading of the report.' },
      { name: 'pages', required: true, description: 'Pages, each { rows: [...] }.' },
      { name: 'dense', required: false, default: false, description: 'Small type: 200 rows fit a page.' },
    ],
    pdfOptions: {
      ...DEFAULT_PDF_OPTIONS,
      pageSize: 'A4',
      margins: { top: '12mm', right: '12mm', bottom: '14mm', left: '12mm' },
      footerTemplate:
        '<div style="font-size:7pt;width:100%;text-align:center;font-family:sans-serif">page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
    },
    title: '{{ title }}',
    metadata: { author: '', subject: '', keywords: '', language: 'en' },
  };
}

export function tableReport(pages: number, rowsPerPage: number): Workload {
  let n = 0;
  const pageList = Array.from({ length: pages }, () => ({
    rows: Array.from({ length: rowsPerPage }, () => {
      n += 1;
      return {
        n,
        item: `Line item ${n} <${n % 7}> & co`,
        account: `ACC-${1000 + (n % 97)}`,
        quantity: n % 13,
        amount: (n * 37) % 1000,
      };
    }),
  }));
  return {
    name: `${pages} page${pages === 1 ? '' : 's'} x ${rowsPerPage} rows`,
    pages,
    rowsPerPage,
    content: content(),
    variables: { title: `Report: ${pages} pages of ${rowsPerPage} rows`, pages: pageList, dense: rowsPerPage > 40 },
  };
}

/** The growth series the benchmarks run: pages 1, 5, 20 at 25 rows; 1 and 20 pages at 200 rows. */
export function growthWorkloads(quick: boolean): Workload[] {
  const shapes: Array<[number, number]> = quick
    ? [
        [1, 25],
        [20, 25],
        [1, 200],
        [20, 200],
      ]
    : [
        [1, 25],
        [5, 25],
        [20, 25],
        [1, 200],
        [20, 200],
      ];
  return shapes.map(([pages, rows]) => tableReport(pages, rows));
}

/** Pages of a PDF (to check that a workload prints as many pages as it claims). */
export async function pdfPageCount(pdf: Uint8Array): Promise<number> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  return doc.getPageCount();
}
