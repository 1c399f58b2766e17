import type { FastifyInstance } from 'fastify';
import type { RouteOptions } from './route.ts';

/** One registered call: what the authorization matrix (tests/server/accounts) is generated from. */
export interface RouteRow {
  method: string;
  url: string;
  /** The access the route declared through `post()`, or null for a route that checks on its own. */
  access: RouteOptions | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of this origin, filled as routes register (CORS preflights left out). */
    routeTable: RouteRow[];
  }
}

/** Records every route registered after this call, in this scope and its children. */
export function recordRoutes(app: FastifyInstance): void {
  const rows: RouteRow[] = [];
  app.decorate('routeTable', rows);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'OPTIONS') continue;
      rows.push({ method, url: route.url, access: route.config?.access ?? null });
    }
  });
}
