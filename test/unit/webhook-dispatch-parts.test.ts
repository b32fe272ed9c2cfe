// The pure parts of webhook delivery: reading an event off the wire, the delivery id, and
// the per-endpoint limiter that paces saturated endpoints.
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { deterministicObjectId, formatId } from '../../src/domain/ids.ts';
import {
  firstDeliveryJobMsgId as firstJobMsgId,
  parseFinalEvent as parseWebhookEvent,
} from '../../src/queue/messages.ts';
import { deliveryIdFor, legacyDeliveryIdFor } from '../../src/webhooks/delivery-dispatcher.ts';
import { EndpointLimiter } from '../../src/webhooks/endpoint-limiter.ts';

const generation = new ObjectId();
const base = {
  eventId: formatId('event', deterministicObjectId('event', generation.toHexString())),
  event: 'generation.completed',
  generationId: formatId('generation', generation),
  workspaceId: formatId('workspace', new ObjectId()),
  timestamp: 1_795_248_000,
};

describe('parseWebhookEvent', () => {
  it('accepts the render pipeline events and keeps error for generation.failed only', () => {
    expect(parseWebhookEvent(base)).toEqual(base);
    expect(parseWebhookEvent({ ...base, error: 'ignored' })).toEqual(base);
    expect(parseWebhookEvent({ ...base, event: 'generation.failed', error: 'Liquid error: line 3' })).toEqual({
      ...base,
      event: 'generation.failed',
      error: 'Liquid error: line 3',
    });
    expect(parseWebhookEvent({ ...base, event: 'generation.failed' })).toMatchObject({ error: 'Rendering failed' });
  });

  it('names what is wrong with a malformed event', () => {
    expect(parseWebhookEvent(null)).toMatch(/not a JSON object/);
    expect(parseWebhookEvent([base])).toMatch(/not a JSON object/);
    expect(parseWebhookEvent({ ...base, eventId: 'gen_1' })).toMatch(/eventId/);
    expect(parseWebhookEvent({ ...base, event: 'generation.started' })).toMatch(/unknown event/);
    expect(parseWebhookEvent({ ...base, generationId: 'gen_xyz' })).toMatch(/generationId/);
    expect(parseWebhookEvent({ ...base, workspaceId: undefined })).toMatch(/workspaceId/);
    expect(parseWebhookEvent({ ...base, timestamp: 1.5 })).toMatch(/timestamp/);
    expect(parseWebhookEvent({ ...base, timestamp: '1795248000' })).toMatch(/timestamp/);
    expect(parseWebhookEvent({ ...base, event: 'generation.failed', error: 42 })).toMatch(/error/);
  });
});

describe('delivery ids', () => {
  it('one id per event and endpoint, stable, and different for other pairs', () => {
    const event = new ObjectId();
    const endpoint = new ObjectId();
    const at = 1_795_248_000;
    expect(
      deliveryIdFor(event, endpoint, at).equals(
        deliveryIdFor(new ObjectId(event.toHexString()), new ObjectId(endpoint.toHexString()), at),
      ),
    ).toBe(true);
    expect(deliveryIdFor(event, endpoint, at).equals(deliveryIdFor(event, new ObjectId(), at))).toBe(false);
    expect(deliveryIdFor(event, endpoint, at).equals(deliveryIdFor(endpoint, event, at))).toBe(false);
    const id = formatId('delivery', deliveryIdFor(event, endpoint, at));
    expect(id).toMatch(/^dlv_[0-9a-f]{24}$/);
    expect(firstJobMsgId(id)).toBe(`${id}:1`);
  });

  it("carry the event's time, so deliveries sort newest first by id", () => {
    const endpoint = new ObjectId();
    const ids = [100, 5, 1_795_248_000, 1_795_248_001].map((at) => deliveryIdFor(new ObjectId(), endpoint, at));
    expect(ids.map((id) => id.getTimestamp().getTime() / 1000)).toEqual([100, 5, 1_795_248_000, 1_795_248_001]);
    expect(ids[3]!.toHexString() > ids[2]!.toHexString()).toBe(true);
    // Not the id docgen 0.1 gave the same pair (kept for rows written then).
    const event = new ObjectId();
    expect(deliveryIdFor(event, endpoint, 7).equals(legacyDeliveryIdFor(event, endpoint))).toBe(false);
  });
});

describe('EndpointLimiter', () => {
  it('allows `limit` attempts per endpoint, independently of other endpoints', () => {
    const limiter = new EndpointLimiter({ limit: 2 });
    expect(limiter.tryAcquire('whe_a')).toBe(true);
    expect(limiter.tryAcquire('whe_a')).toBe(true);
    expect(limiter.isSaturated('whe_a')).toBe(true);
    expect(limiter.tryAcquire('whe_a')).toBe(false);
    expect(limiter.tryAcquire('whe_b')).toBe(true);
    expect(limiter.inFlight).toBe(3);
    limiter.release('whe_a', 100);
    expect(limiter.isSaturated('whe_a')).toBe(false);
    expect(limiter.tryAcquire('whe_a')).toBe(true);
    limiter.release('whe_a');
    limiter.release('whe_a');
    limiter.release('whe_b');
    expect(limiter.inFlight).toBe(0);
    // Releasing more than was acquired never goes negative.
    limiter.release('whe_a');
    expect(limiter.tryAcquire('whe_a')).toBe(true);
  });

  it('paces waiting jobs at about one attempt duration, longer for jobs that waited before, within bounds', () => {
    const middle = () => 0.5; // jitter factor 1
    const limiter = new EndpointLimiter({ limit: 2, random: middle });
    expect(limiter.retryDelayMs('whe_idle')).toBe(250);
    limiter.tryAcquire('whe_slow');
    limiter.tryAcquire('whe_slow');
    limiter.release('whe_slow', 2000); // one still in flight, average 2 s
    expect(limiter.retryDelayMs('whe_slow')).toBe(2000);
    expect(limiter.retryDelayMs('whe_slow', 4)).toBe(4000);
    expect(limiter.retryDelayMs('whe_slow', 50)).toBe(5000);
    const jittery = new EndpointLimiter({ limit: 1, random: () => 0 });
    expect(jittery.retryDelayMs('whe_x')).toBe(125);
    expect(() => new EndpointLimiter({ limit: 0 })).toThrow(RangeError);
  });
});
