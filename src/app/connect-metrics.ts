// Counts and times every Connect/gRPC call (docgen_grpc_requests_total and its histogram).
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import type { Metrics } from '../ops/metrics.ts';

function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

export function observeConnectCalls(metrics: Metrics): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const service = req.service.typeName;
    const method = req.method.name;
    try {
      const res = await next(req);
      metrics.observeGrpcRequest(service, method, 'ok', (performance.now() - started) / 1000);
      return res;
    } catch (err) {
      const code = err instanceof ConnectError ? err.code : Code.Internal;
      metrics.observeGrpcRequest(service, method, codeName(code), (performance.now() - started) / 1000);
      throw err;
    }
  };
}
