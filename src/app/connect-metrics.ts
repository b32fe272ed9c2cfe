// Counts and times every Connect/gRPC call (docgen_grpc_requests_total and its histogram) and,
// at debug level, logs it: the access log of the Connect listeners (REST has its own).
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';

function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

export function observeConnectCalls(metrics: Metrics, logger?: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const service = req.service.typeName;
    const method = req.method.name;
    const observe = (code: string) => {
      const seconds = (performance.now() - started) / 1000;
      metrics.observeGrpcRequest(service, method, code, seconds);
      // Never the headers or the message: they carry API keys, tokens and webhook secrets.
      if (logger?.isLevelEnabled('debug'))
        logger.debug('rpc', { service, method, code, durationMs: Math.round(seconds * 1000) });
    };
    try {
      const res = await next(req);
      observe('ok');
      return res;
    } catch (err) {
      observe(codeName(err instanceof ConnectError ? err.code : Code.Internal));
      throw err;
    }
  };
}
