// The render queue as gauges, read at scrape time from JetStream (every render process reports
// the same values: aggregate with max):
//   docgen_render_queue_depth                      jobs in the lanes and the pre-lanes stream
//   docgen_render_consumer_pending                 jobs the render consumers have not settled
//   docgen_render_consumer_redelivered             of those, delivered more than once
//   docgen_render_workspace_pending_jobs{workspace}        top N workspaces by jobs, + "other"
//   docgen_render_workspace_oldest_wait_seconds{workspace} their oldest job's age, + "other"
// Cardinality stays bounded (N + 1 series) however many workspaces have work. One scrape costs
// one stream-info request with a subject filter (the per-subject counts), one consumer list of
// the lanes stream, and one message look-up per reported workspace lane.
import type { CollectedGaugeName, GaugeCollector, GaugeSample } from '../ops/metrics.ts';
import type { NatsQueue } from './jetstream.ts';
import { parseRenderLaneSubject } from './messages.ts';

/** Workspaces reported one by one; the rest are summed under "other". */
export const TOP_WORKSPACES = 10;

interface LaneCount {
  subject: string;
  workspaceId: string;
  count: number;
}

export function renderQueueGauges(
  nats: Pick<NatsQueue, 'jsm' | 'connection' | 'prefix' | 'names'>,
  legacyConsumer: string,
  now: () => number = Date.now,
): Array<readonly [CollectedGaugeName, GaugeCollector]> {
  const { streams, subjects } = nats.names;

  const laneCounts = async (): Promise<LaneCount[]> => {
    const info = await nats.jsm.streams.info(streams.renderLanes, { subjects_filter: subjects.renderLanes });
    const lanes: LaneCount[] = [];
    for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
      const route = parseRenderLaneSubject(nats.prefix, subject);
      if (route && count > 0) lanes.push({ subject, workspaceId: route.workspaceId, count });
    }
    return lanes;
  };

  /** Publish time of the oldest message on a subject (JetStream's "next message by subject"). */
  const oldestOn = async (subject: string): Promise<number | undefined> => {
    const reply = await nats.connection.request(
      `$JS.API.STREAM.MSG.GET.${streams.renderLanes}`,
      JSON.stringify({ seq: 1, next_by_subj: subject }),
      { timeout: 2_000 },
    );
    const answer = JSON.parse(reply.string()) as { message?: { time?: string } };
    const time = answer.message?.time ? Date.parse(answer.message.time) : NaN;
    return Number.isFinite(time) ? time : undefined;
  };

  // One listing per scrape serves both workspace gauges.
  let current: Promise<{ pending: GaugeSample; oldest: GaugeSample }> | undefined;
  const perWorkspace = () =>
    (current ??= (async () => {
      const lanes = await laneCounts();
      const byWorkspace = new Map<string, LaneCount[]>();
      for (const lane of lanes) byWorkspace.set(lane.workspaceId, [...(byWorkspace.get(lane.workspaceId) ?? []), lane]);
      const ranked = [...byWorkspace.entries()]
        .map(([workspaceId, ls]) => ({ workspaceId, lanes: ls, total: ls.reduce((n, l) => n + l.count, 0) }))
        .sort((a, b) => b.total - a.total);
      const top = ranked.slice(0, TOP_WORKSPACES);
      const rest = ranked.slice(TOP_WORKSPACES);
      const t = now();
      const ageOf = async (ls: LaneCount[]) => {
        const times = (await Promise.all(ls.map((l) => oldestOn(l.subject)))).filter((x) => x !== undefined);
        return times.length === 0 ? 0 : Math.max(0, (t - Math.min(...times)) / 1000);
      };
      const pending: { labels: Record<string, string>; value: number }[] = top.map((w) => ({
        labels: { workspace: w.workspaceId },
        value: w.total,
      }));
      const oldest = await Promise.all(
        top.map(async (w) => ({ labels: { workspace: w.workspaceId }, value: await ageOf(w.lanes) })),
      );
      if (rest.length > 0) {
        pending.push({ labels: { workspace: 'other' }, value: rest.reduce((n, w) => n + w.total, 0) });
        // The rest's oldest: the lanes of the other workspaces hold jobs in stream order, so
        // the oldest of them is the first message of the lowest-numbered of their subjects;
        // looking each up would cost a request per workspace: bound it to the N largest.
        oldest.push({
          labels: { workspace: 'other' },
          value: await ageOf(rest.slice(0, TOP_WORKSPACES).flatMap((w) => w.lanes)),
        });
      }
      return { pending, oldest };
    })().finally(() => setTimeout(() => (current = undefined), 0)));

  let totals: Promise<{ pending: number; redelivered: number }> | undefined;
  const consumerTotals = () =>
    (totals ??= readConsumerTotals().finally(() => setTimeout(() => (totals = undefined), 0)));
  const readConsumerTotals = async () => {
    let pending = 0;
    let redelivered = 0;
    for await (const info of nats.jsm.consumers.list(streams.renderLanes)) {
      pending += info.num_pending + info.num_ack_pending;
      redelivered += info.num_redelivered;
    }
    const legacy = await nats.jsm.consumers.info(streams.render, legacyConsumer).catch(() => undefined);
    if (legacy) {
      pending += legacy.num_pending + legacy.num_ack_pending;
      redelivered += legacy.num_redelivered;
    }
    return { pending, redelivered };
  };

  return [
    [
      'docgen_render_queue_depth',
      async () =>
        (await nats.jsm.streams.info(streams.renderLanes)).state.messages +
        (await nats.jsm.streams.info(streams.render)).state.messages,
    ],
    ['docgen_render_consumer_pending', async () => (await consumerTotals()).pending],
    ['docgen_render_consumer_redelivered', async () => (await consumerTotals()).redelivered],
    ['docgen_render_workspace_pending_jobs', async () => (await perWorkspace()).pending],
    ['docgen_render_workspace_oldest_wait_seconds', async () => (await perWorkspace()).oldest],
  ];
}
