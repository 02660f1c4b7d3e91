import type { FastifyInstance } from 'fastify';

/**
 * A request with no body is a request with no body, whatever its content type says: some SDKs
 * send `Content-Type: application/json` on every request, a DELETE included, and nothing after
 * it. On a route that takes no body such a request is not parsed (Fastify would refuse it as
 * an empty JSON body); a route that takes one still says that it is missing.
 */
export function registerEmptyBodies(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const headers = request.headers;
    if (headers['content-type'] === undefined || headers['transfer-encoding'] !== undefined) return;
    const length = headers['content-length'];
    if (length !== undefined && length !== '0') return;
    if (request.routeOptions.schema?.body !== undefined) return;
    delete headers['content-type'];
  });
}
