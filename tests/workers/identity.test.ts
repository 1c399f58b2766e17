/// <reference types="node" />
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/test-app.ts';
import { createSession } from '../../server/modules/auth/caller.repository.ts';
import { Identity, tokenKey, type Who } from '../../src/upload/queue/account.ts';
import { fetchTransport, type Transport } from '../../src/upload/queue/transport.ts';
import type { QueueAuth } from '../../src/upload/queue/owner.ts';
import { CHUNK, createHarness, textFile, waitForState, waitUntil, type Harness } from './helpers/queue-harness.ts';

/** fetch, except that the first `drops` auth/data requests get no answer (a dropped mobile connection). */
function droppingAuthData(drops: number): Transport & { asked: () => number } {
  let asked = 0;
  return {
    postMultipart: (request) => fetchTransport.postMultipart(request),
    async postJson(url, body, signal) {
      if (url.endsWith('/api/v1/auth/data') && ++asked <= drops) throw new TypeError('Failed to fetch');
      return fetchTransport.postJson(url, body, signal);
    },
    asked: () => asked,
  };
}

/** auth/data never answers; while held, a request fails only when the test lets it go. */
function unansweredAuthData(): Transport & { hold: () => () => void } {
  let held: Promise<void> | null = null;
  return {
    postMultipart: (request) => fetchTransport.postMultipart(request),
    async postJson(url, body, signal) {
      if (!url.endsWith('/api/v1/auth/data')) return fetchTransport.postJson(url, body, signal);
      await held;
      throw new TypeError('Failed to fetch');
    },
    hold() {
      let release = () => {};
      held = new Promise((resolve) => (release = resolve));
      return release;
    },
  };
}

/**
 * Issue 11 item 1 on a flaky connection: the queue sends a user's stored uploads only once the
 * server has said who the token belongs to. An auth/data answer lost while the browser still says
 * it is online fires no `online` event, so the worker must ask again by itself.
 */
describe.each(DIALECTS)('who the token belongs to, on %s', (dialect) => {
  let h: Harness;
  let identity: Identity | undefined;
  afterEach(async () => {
    identity?.stop();
    await h?.close();
  });

  function identityFor(auth: QueueAuth, transport: Transport, named: (who: Who) => Promise<void> = async () => undefined): Identity {
    return new Identity({
      apiUrl: () => h.apiUrl,
      store: () => null,
      transport,
      currentToken: () => auth.token,
      async setOwner(owner, alias) {
        auth.owner = owner;
        auth.alias = alias;
      },
      named,
      backoff: { baseMs: 20, maxMs: 100 },
    });
  }

  it('keeps asking after lost answers, then sends the uploads the user kept for their next sign-in', async () => {
    h = await createHarness(dialect);
    const user = h.signedIn!;
    // The user queued a file and signed out keeping it (offline, so nothing was sent).
    const first = await h.openTab();
    h.network.set(false);
    const [kept] = await first.queue.enqueue([textFile(CHUNK * 2 + 10, 'kept.txt')]);
    await waitForState(first.queue, kept!.id, ['offline']);
    await first.queue.signOut(true);
    h.signedIn = null;
    await first.queue.close(); // the page went away
    h.network.set(true);

    // They sign in again; the first two answers naming them are lost on the way.
    const auth: QueueAuth = { apiUrl: h.apiUrl, token: user.token, owner: null };
    const transport = droppingAuthData(2);
    const { queue } = await h.openTab({ auth: async () => ({ ...auth }) });
    identity = identityFor(auth, transport, async () => queue.wake());
    await identity.identify(user.token);
    expect(auth.owner).toMatch(/^token:/);

    const done = await waitForState(queue, kept!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(auth.owner).toBe(user.owner);
    expect(transport.asked()).toBe(3);
  });

  it("files an upload queued before its own lookup answered under the user the page's session named, so a kept upload is theirs at their next sign-in", async () => {
    h = await createHarness(dialect);
    const user = h.signedIn!;
    // The connection dropped right after sign-in: the page's session check got its answer, the
    // queue's own lookup never does.
    h.network.set(false);
    const auth: QueueAuth = { apiUrl: h.apiUrl, token: user.token, owner: null };
    const { queue, store } = await h.openTab({ auth: async () => ({ ...auth }) });
    const gate = unansweredAuthData();
    identity = new Identity({
      apiUrl: () => h.apiUrl,
      store: () => store,
      transport: gate,
      currentToken: () => auth.token,
      async setOwner(owner, alias) {
        auth.owner = owner;
        auth.alias = alias;
      },
      async named(who) {
        await queue.adoptOwner(who.provisional, who.owner);
      },
      backoff: { baseMs: 20, maxMs: 100 },
    });
    await identity.identify(user.token);
    const [kept] = await queue.enqueue([textFile(CHUNK + 10, 'kept-offline.txt')]);
    // A retry still waiting for its answer when the page says who it is...
    const lost = gate.hold();
    const retrying = identity.identify(user.token);
    await identity.remember(user.token, user.owner);
    await identity.identify(user.token);
    expect(auth.owner).toBe(user.owner);
    // ...fails afterwards, and must not take the answer back.
    lost();
    await retrying;
    expect(auth.owner).toBe(user.owner);

    // They sign out keeping it, and sign in again later (a new token) with the network back.
    await queue.signOut(true);
    auth.token = null;
    await identity.identify(null);
    await queue.close();
    h.network.set(true);
    h.signedIn = { token: await createSession(h.t.deps.db, user.owner), owner: user.owner };
    const { queue: again } = await h.openTab();
    const done = await waitForState(again, kept!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
  });

  it("gives the user, at sign-out, a file written under the token's key after the server had named them, so it is theirs at their next sign-in", async () => {
    h = await createHarness(dialect);
    const user = h.signedIn!;
    h.network.set(false);
    const key = await tokenKey(user.token);
    const auth: QueueAuth = { apiUrl: h.apiUrl, token: user.token, owner: key, alias: key };
    const { queue } = await h.openTab({ auth: async () => ({ ...auth }) });
    const [kept] = await queue.enqueue([textFile(CHUNK + 10, 'picked-while-naming.txt')]);
    // The server named the user, and the hand-over looked before this record was written (enqueue
    // reads the owner first): the record is still under the key, shown through the alias.
    auth.owner = user.owner;
    expect((await queue.list()).map((i) => i.id)).toEqual([kept!.id]);

    await queue.signOut(true);
    auth.token = null;
    await queue.close();
    h.network.set(true);
    h.signedIn = { token: await createSession(h.t.deps.db, user.owner), owner: user.owner };
    const { queue: again } = await h.openTab();
    const done = await waitForState(again, kept!.id, ['done', 'failed'], 10_000);
    expect(done.state).toBe('done');
  });

  it('queues a file picked while the lookup is still unanswered, under the token until the server names the user', async () => {
    h = await createHarness(dialect);
    const user = h.signedIn!;
    const auth: QueueAuth = { apiUrl: h.apiUrl, token: user.token, owner: null };
    const { queue } = await h.openTab({ auth: async () => ({ ...auth }) });
    // A stalled connection: the first auth/data gets no answer until the test lets it fail;
    // the ones after it are answered.
    let release = () => {};
    const stalled = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const gate: Transport = {
      postMultipart: (request) => fetchTransport.postMultipart(request),
      async postJson(url, body, signal) {
        if (url.endsWith('/api/v1/auth/data') && ++asked === 1) {
          await stalled;
          throw new TypeError('Failed to fetch');
        }
        return fetchTransport.postJson(url, body, signal);
      },
    };
    identity = identityFor(auth, gate, async (who) => {
      await queue.adoptOwner(who.provisional, who.owner);
      queue.wake();
    });
    const lookup = identity.begin(user.token);
    await lookup;
    expect(auth.owner).toMatch(/^token:/);
    const [picked] = await queue.enqueue([textFile(CHUNK + 10, 'picked-at-once.txt')]);
    expect(picked!.name).toBe('picked-at-once.txt');
    // The lookup fails and is asked again (20–100 ms later), this time answered: the upload is
    // the user's and is sent.
    release();
    const done = await waitForState(queue, picked!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(auth.owner).toBe(user.owner);
  });

  it('keeps uploads sent under the token while the server names the user: no row goes missing, no request is cut', async () => {
    h = await createHarness(dialect);
    const user = h.signedIn!;
    const auth: QueueAuth = { apiUrl: h.apiUrl, token: user.token, owner: null, alias: null };
    let lookups = 0;
    let failLookup = () => {};
    const lookupStalled = new Promise<void>((resolve) => (failLookup = resolve));
    // Every chunk request waits at the door until the test lets it through, so both uploads are
    // in flight while the owner changes; one aborted meanwhile is counted.
    let openDoor = () => {};
    const door = new Promise<void>((resolve) => (openDoor = resolve));
    let waiting = 0;
    let cut = 0;
    const transport: Transport = {
      async postMultipart(request) {
        waiting += 1;
        await door;
        if (request.signal.aborted) cut += 1;
        return fetchTransport.postMultipart(request);
      },
      async postJson(url, body, signal) {
        if (url.endsWith('/api/v1/auth/data') && ++lookups === 1) {
          await lookupStalled;
          throw new TypeError('Failed to fetch');
        }
        return fetchTransport.postJson(url, body, signal);
      },
    };
    const { queue: sending } = await h.openTab({ auth: async () => ({ ...auth }), transport });
    let adopted = false;
    identity = identityFor(auth, transport, async (who) => {
      await sending.adoptOwner(who.provisional, who.owner);
      adopted = true;
      sending.wake();
    });
    await identity.begin(user.token);
    const lists: string[][] = [];
    const unsubscribe = sending.subscribe((items) => lists.push(items.map((item) => item.id).sort()));
    const picked = await sending.enqueue([textFile(CHUNK * 3, 'big.bin', 1), textFile(CHUNK + 5, 'small.txt', 2)]);
    const ids = picked.map((item) => item.id).sort();
    await waitUntil(() => waiting === 2);
    const shown = lists.length;

    failLookup(); // answered on the retry, 20–100 ms later: the user is named, the uploads handed over
    await waitUntil(() => adopted);
    openDoor();
    for (const id of ids) expect((await waitForState(sending, id, ['done', 'failed'])).state).toBe('done');
    unsubscribe();
    expect(auth.owner).toBe(user.owner);
    expect(cut).toBe(0);
    // Every list the page was shown from the pick on held both uploads.
    expect(lists.slice(shown - 1).filter((list) => ids.some((id) => !list.includes(id)))).toEqual([]);
  });

  it('does not ask again about a token the server refused, nor report an answer for a token no longer in use', async () => {
    h = await createHarness(dialect);
    const refused: QueueAuth = { apiUrl: h.apiUrl, token: 'not-a-real-token', owner: null };
    const transport = droppingAuthData(0);
    identity = identityFor(refused, transport);
    await identity.identify(refused.token);
    expect(refused.owner).toMatch(/^token:/);
    // A window in which a retry (20–100 ms apart) would have asked several times.
    await new Promise((r) => setTimeout(r, 400));
    expect(transport.asked()).toBe(1);

    // Signed out while the answer was on its way: the answer names nobody.
    const switched: QueueAuth = { apiUrl: h.apiUrl, token: h.signedIn!.token, owner: null };
    const named: Who[] = [];
    let answer = () => {};
    const held = new Promise<void>((resolve) => (answer = resolve));
    let answered = 0;
    let sent = () => {};
    const onItsWay = new Promise<void>((resolve) => (sent = resolve));
    const slow: Transport = {
      postMultipart: (request) => fetchTransport.postMultipart(request),
      async postJson(url, body, signal) {
        sent();
        const reply = await fetchTransport.postJson(url, body, signal);
        await held;
        answered += 1;
        return reply;
      },
    };
    identity = identityFor(switched, slow, async (who) => void named.push(who));
    const asking = identity.identify(switched.token);
    await onItsWay;
    switched.token = null;
    answer();
    await asking;
    expect(answered).toBe(1);
    expect(switched.owner).not.toBe(h.signedIn!.owner);
    expect(named).toEqual([]);
  });

  it('asks nothing for a token signed out before the lookup began', async () => {
    h = await createHarness(dialect);
    const transport = droppingAuthData(0);
    const auth: QueueAuth = { apiUrl: h.apiUrl, token: h.signedIn!.token, owner: null };
    identity = identityFor(auth, transport);
    const asking = identity.identify(auth.token);
    auth.token = null;
    await asking;
    expect(auth.owner).toBeNull();
    expect(transport.asked()).toBe(0);
  });
});
