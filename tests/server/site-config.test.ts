import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { registerSite } from '../../server/site/site.ts';

/** Design §2: the site's /config.json tells the one web build what this deployment is. */
describe('/config.json on the site origin', () => {
  let t: TestApp | undefined;
  let site: FastifyInstance | undefined;
  afterEach(async () => {
    await site?.close();
    await t?.close();
    site = undefined;
    t = undefined;
  });

  async function configJson(env: Record<string, string>) {
    t = await createTestApp('sqlite', env);
    site = Fastify();
    // No build needed: /config.json is answered before the static files are looked for.
    await registerSite(site, t.deps, '/nonexistent-stash-dist');
    const res = await site.inject({ method: 'GET', url: '/config.json' });
    expect(res.statusCode).toBe(200);
    return res.json() as Record<string, unknown>;
  }

  it("carries the operator's donation wallets in order (spec §1 FAQ)", async () => {
    const config = await configJson({ DONATION_WALLETS: 'Bitcoin (BTC)=bc1qexample;Monero (XMR)=4Aexample' });
    expect(config.donationWallets).toEqual([
      { label: 'Bitcoin (BTC)', address: 'bc1qexample' },
      { label: 'Monero (XMR)', address: '4Aexample' },
    ]);
  });

  it('carries an empty list when DONATION_WALLETS is unset', async () => {
    const config = await configJson({});
    expect(config.donationWallets).toEqual([]);
  });
});
