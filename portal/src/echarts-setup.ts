// The parts of ECharts the Overview uses (bar charts on a canvas, with legend and tooltip),
// registered once: importing only these keeps the chunk a fraction of the whole library.
import * as echarts from 'echarts/core';
import { BarChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, AriaComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, GridComponent, LegendComponent, TooltipComponent, AriaComponent, CanvasRenderer]);

export { echarts };
