// Charts of the Overview, drawn by ECharts (bundled: served from the portal's own origin, and
// loaded only with the screens that show a chart). Each chart is an image with an accessible
// name that says what it shows, and a "Show as table" toggle whose table is its text
// alternative. The canvas renderer draws everything itself: no inline style elements or
// attributes, which the portal's Content-Security-Policy would refuse.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

export interface ChartSeries {
  name: string;
  values: number[];
  color: string;
}

type EChartsModule = typeof import('./echarts-setup.ts');
let echartsModule: Promise<EChartsModule> | undefined;
const loadECharts = () => (echartsModule ??= import('./echarts-setup.ts'));

/**
 * A bar chart (stacked or grouped; vertical, or horizontal for long category names).
 * `label` is its accessible name; `table` is the same numbers as a table.
 */
export function BarChart(props: {
  id: string;
  label: string;
  categories: string[];
  series: ChartSeries[];
  stacked?: boolean;
  horizontal?: boolean;
  unit?: string;
  table: ComponentChildren;
}) {
  const { id, label, categories, series, stacked = false, horizontal = false, unit = '' } = props;
  const element = useRef<HTMLDivElement>(null);
  const [showTable, setShowTable] = useState(false);
  const [failed, setFailed] = useState('');
  // Redrawn when the numbers change, not on every render (the arrays are new each time).
  const shape = JSON.stringify({ categories, series, stacked, horizontal, unit });
  useEffect(() => {
    let disposed = false;
    let chart: { dispose(): void; resize(): void } | undefined;
    let observer: ResizeObserver | undefined;
    void loadECharts().then(
      ({ echarts }) => {
        if (disposed || !element.current) return;
        const instance = echarts.init(element.current, undefined, { renderer: 'canvas' });
        chart = instance;
        const valueAxis = {
          type: 'value' as const,
          minInterval: 1,
          axisLabel: { formatter: (v: number) => `${v}${unit}` },
        };
        const categoryAxis = {
          type: 'category' as const,
          data: categories,
          axisLabel: { hideOverlap: true },
        };
        instance.setOption({
          animation: false,
          aria: { enabled: false }, // the container carries the name, the table the numbers
          color: series.map((s) => s.color),
          legend: { top: 0, data: series.map((s) => s.name) },
          grid: { left: horizontal ? 120 : 48, right: 16, top: 36, bottom: 32 },
          // richText: the tooltip is drawn on the canvas, not as HTML with inline styles.
          tooltip: { trigger: 'axis', renderMode: 'richText' },
          xAxis: horizontal ? valueAxis : categoryAxis,
          yAxis: horizontal ? categoryAxis : valueAxis,
          series: series.map((s) => ({
            name: s.name,
            type: 'bar',
            data: s.values,
            ...(stacked ? { stack: 'total' } : {}),
            barMaxWidth: 28,
          })),
        });
        observer = new ResizeObserver(() => instance.resize());
        observer.observe(element.current);
      },
      (err: unknown) => setFailed(`The chart could not be drawn (${String(err)}); the table shows its numbers.`),
    );
    return () => {
      disposed = true;
      observer?.disconnect();
      chart?.dispose();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `shape` stands for every input
  }, [shape]);
  return (
    <div class="chart-block">
      <div class="row chart-tools">
        <button
          type="button"
          class="secondary"
          aria-expanded={showTable || failed !== ''}
          aria-controls={`${id}-table`}
          onClick={() => setShowTable((v) => !v)}
        >
          {showTable ? 'Hide table' : 'Show as table'}
        </button>
      </div>
      <div ref={element} class="chart" role="img" aria-label={label} />
      {failed && <p class="error">{failed}</p>}
      <div id={`${id}-table`} hidden={!(showTable || failed !== '')}>
        {props.table}
      </div>
    </div>
  );
}
