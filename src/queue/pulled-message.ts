// A JetStream message fetched with a plain `no_wait` pull request (fair-puller.ts), with the
// settle operations of the JetStream wire protocol: the reply subject of a delivered message
// is its ack subject, `+ACK`, `-NAK [{"delay":ns}]`, `+WPI` (working) and `+TERM` settle it,
// and its tokens carry the delivery count and the consumer's pending count.
// (docs.nats.io "JetStream wire API reference": acknowledging messages.)
import { nanos, type Msg, type MsgHdrs } from '@nats-io/transport-node';

/** What the job loop needs of a delivered message (a subset of the client library's JsMsg). */
export interface DeliveredMessage {
  readonly subject: string;
  readonly seq: number;
  readonly headers: MsgHdrs | undefined;
  readonly info: { deliveryCount: number; pending: number; timestampNanos: number };
  string(): string;
  ack(): void;
  nak(millis?: number): void;
  working(): void;
  term(): void;
}

/** Reads the delivery info of an ack subject; undefined when it is not one. */
export function parseAckSubject(
  reply: string,
): { streamSequence: number; deliveryCount: number; pending: number; timestampNanos: number } | undefined {
  const tokens = reply.split('.');
  // Old form $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>;
  // new form adds <domain>.<account hash> after ACK and a random token at the end.
  if (tokens.length === 9) tokens.splice(2, 0, '_', '');
  if (tokens.length < 11 || tokens[0] !== '$JS' || tokens[1] !== 'ACK') return undefined;
  const deliveryCount = Number(tokens[6]);
  const streamSequence = Number(tokens[7]);
  const timestampNanos = Number(tokens[9]);
  const pending = Number(tokens[10]);
  if (![deliveryCount, streamSequence, pending].every(Number.isSafeInteger)) return undefined;
  return { deliveryCount, streamSequence, pending, timestampNanos };
}

/** Wraps a delivered message (its reply subject is the ack subject). */
export function deliveredMessage(msg: Msg, publishAck: (subject: string, payload: string) => void): DeliveredMessage {
  const ackSubject = msg.reply;
  const info = ackSubject ? parseAckSubject(ackSubject) : undefined;
  if (!ackSubject || !info) throw new Error(`not a JetStream delivery: reply subject ${JSON.stringify(msg.reply)}`);
  const send = (payload: string) => publishAck(ackSubject, payload);
  return {
    subject: msg.subject,
    seq: info.streamSequence,
    headers: msg.headers,
    info,
    string: () => msg.string(),
    ack: () => send('+ACK'),
    nak: (millis?: number) => send(millis ? `-NAK ${JSON.stringify({ delay: nanos(millis) })}` : '-NAK'),
    working: () => send('+WPI'),
    term: () => send('+TERM'),
  };
}
