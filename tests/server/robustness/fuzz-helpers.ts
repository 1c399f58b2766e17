import * as admin from '../../../contract/admin.ts';
import * as auth from '../../../contract/auth.ts';
import * as files from '../../../contract/files.ts';
import * as invites from '../../../contract/invites.ts';
import * as utils from '../../../contract/utils.ts';
import type { Endpoint } from '../../../contract/common.ts';
import type { TSchema } from 'typebox';

/** Every JSON endpoint the contract exports (files/upload is multipart and has no `body`). */
export function contractEndpoints(): Endpoint<TSchema, TSchema>[] {
  const seen = new Map<string, Endpoint<TSchema, TSchema>>();
  for (const mod of [admin, auth, files, invites, utils]) {
    for (const value of Object.values(mod) as unknown[]) {
      if (value && typeof value === 'object' && 'path' in value && 'body' in value && 'response' in value) {
        const ep = value as Endpoint<TSchema, TSchema>;
        seen.set(ep.path, ep);
      }
    }
  }
  return [...seen.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/** mulberry32: a tiny seeded PRNG, so a failing case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_STRINGS = ['', '\u0000', 'a\u0000b', '\ud800', '\udfff\ud800', '\u202e\u0041', '﷽'.repeat(50), '../../etc/passwd', '%00', '${jndi:x}', "' OR 1=1 --", '<script>', '🙂'.repeat(300), '\r\n\t', 'NaN', 'Infinity', '-0', '1e309'];
const ODD_NUMBERS = [0, -0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 4294967296];
const ODD_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', '\u0000', 'a.b', '$where', 'isAdmin'];

/** A random JSON value: depth-bounded, biased towards the shapes that break parsers and SQL. */
export function randomJson(rand: () => number, depth = 0): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const kind = Math.floor(rand() * (depth > 3 ? 5 : 7));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return rand() < 0.5 ? pick(ODD_NUMBERS) : Math.floor(rand() * 2 ** 40) - 2 ** 39;
    case 3:
      return pick(ODD_STRINGS);
    case 4:
      return String.fromCharCode(...Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 0xffff)));
    case 5:
      return Array.from({ length: Math.floor(rand() * 5) }, () => randomJson(rand, depth + 1));
    default:
      return randomObject(rand, depth + 1);
  }
}

/**
 * A random object that always carries a key outside every contract body, so no case can
 * accidentally be a valid call that changes something.
 */
export function randomObject(rand: () => number, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const n = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) {
    const key = rand() < 0.5 ? ODD_KEYS[Math.floor(rand() * ODD_KEYS.length)] ?? 'k' : `k${Math.floor(rand() * 1000)}`;
    Object.defineProperty(out, key, { value: randomJson(rand, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  out[`zz_unknown_${Math.floor(rand() * 1e6)}`] = randomJson(rand, depth + 1);
  return out;
}

/** The smallest body each schema accepts, so one field at a time can be made wrong. */
export function sampleOf(schema: unknown): unknown {
  const s = schema as Record<string, unknown>;
  if ('const' in s) return s.const;
  if (Array.isArray(s.anyOf)) return sampleOf(s.anyOf[0]);
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, unknown>;
      for (const key of (s.required ?? []) as string[]) out[key] = sampleOf(props[key]);
      return out;
    }
    case 'string':
      if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (s.format === 'uri' || s.format === 'url') return 'https://example.invalid/x';
      return 'a'.repeat(Math.max(Number(s.minLength ?? 1), 3));
    case 'integer':
    case 'number':
      return Number(s.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return null;
  }
}

/** Values for one field that no schema of ours allows, whatever the field's type. */
export function wrongValuesFor(schema: unknown): unknown[] {
  const s = schema as Record<string, unknown>;
  const generic: unknown[] = [null, [], { nested: { deeper: [1] } }];
  if (s.type === 'string') {
    return [...generic, 1, true, 'x'.repeat(70_000)];
  }
  if (s.type === 'integer' || s.type === 'number') {
    return [...generic, 'NaN', '1', 1e308, -1e308, ...(s.type === 'integer' ? [1.5] : []), ...(s.minimum !== undefined ? [Number(s.minimum) - 1] : [])];
  }
  if (s.type === 'boolean') return [...generic, 0, 'true'];
  return [...generic, 'string', 12];
}

/** Strings with bytes that databases choke on; a refusal is fine, a 500 is not. */
export const HOSTILE_STRINGS = ['\u0000', 'a\u0000b', '\ud800', 'x\udfff'];
