import os from 'node:os';
import path from 'node:path';
import type { DonationWallet } from '../contract/site.ts';
import { DONATION_WALLETS_FORMAT, parseDonationWallets } from './config-wallets.ts';

export type Role = 'site' | 'api' | 'files';
export type StorageDriver = 'local' | 's3';

export interface CaptchaProviderConfig {
  siteKey: string | null;
  secret: string | null;
  verifyUrl: string;
}

export interface Config {
  dataDir: string;
  databaseUrl: string;
  storage: {
    driver: StorageDriver;
    /**
     * Local disk: uploads written past the page cache where the disk takes O_DIRECT (`true`),
     * through it (`false`), or by whichever this host's uploads go faster (`auto`, the default;
     * server/README "Past the page cache").
     */
    directWrites: boolean | 'auto';
    s3: {
      endpoint: string | null;
      region: string;
      bucket: string | null;
      accessKeyId: string | null;
      secretAccessKey: string | null;
      forcePathStyle: boolean;
    };
  };
  roles: readonly Role[];
  ports: Record<Role, number>;
  host: string;
  urls: { site: string; api: string; files: string };
  admin: { username: string | null; password: string | null };
  captcha: { hcaptcha: CaptchaProviderConfig; turnstile: CaptchaProviderConfig };
  sentryDsn: string | null;
  communityUrl: string | null;
  /** Spec §1: the FAQ lists these; empty when DONATION_WALLETS is unset. */
  donationWallets: readonly DonationWallet[];
  siteName: string;
  urlUploadAllowPrivate: boolean;
  trustProxy: boolean | string;
  logLevel: string;
  rateLimits: boolean;
  /** Where the rate-limit counters live when several API processes share them; null keeps them in memory. */
  redisUrl: string | null;
  /** Requests per minute per client IP on the files host (design §6). */
  filesRateLimit: number;
  /** Issue 9: processes serving the files host on its one port (server/files-processes.ts). */
  filesProcesses: number;
  /**
   * The proxy's internal location for stored files (files-host/accel-redirect.ts): downloads are
   * handed to nginx with `X-Accel-Redirect` when it asks for that; null serves every byte here.
   */
  filesAccelRedirect: string | null;
  /** Issue 8 item 5: connections per client address per listener (0 = no cap; off behind a proxy). */
  maxConnectionsPerIp: number;
  /** Issue 8 item 5: the slowest request body accepted, bytes per second (0 = no check). */
  minBodyRate: number;
  /** Design §11: client IPs appear in logs only when the operator opts in. */
  logClientIps: boolean;
  /** Design §11: source maps are served only when the operator asks. */
  serveSourceMaps: boolean;
  /** Design §11: shown on the privacy page for erasure and abuse requests. */
  contactEmail: string | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const ROLES: readonly Role[] = ['site', 'api', 'files'];
/** More than a machine has cores would only take turns; this bounds a typo, not a machine. */
const MAX_FILES_PROCESSES = 64;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads the environment once (design §4) into a frozen, typed config. Every bad variable is
 * collected, so the operator sees the whole list at once instead of fixing them one start at a time.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string): string | null => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? null : v.trim();
  };
  const flag = (v: string): boolean | null => (/^(1|true|yes|on)$/i.test(v) ? true : /^(0|false|no|off)$/i.test(v) ? false : null);
  const bool = (name: string, fallback: boolean): boolean => {
    const v = str(name);
    if (v === null) return fallback;
    const set = flag(v);
    if (set === null) problems.push(`${name} must be true or false (got "${v}")`);
    return set ?? fallback;
  };
  /** A flag that may also be left to the server: `auto`, or unset. */
  const boolOrAuto = (name: string): boolean | 'auto' => {
    const v = str(name);
    if (v === null || /^auto$/i.test(v)) return 'auto';
    const set = flag(v);
    if (set === null) problems.push(`${name} must be auto, true or false (got "${v}")`);
    return set ?? 'auto';
  };
  const port = (name: string, fallback: number): number => {
    const v = str(name);
    if (v === null) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      problems.push(`${name} must be a port number from 0 to 65535 (got "${v}")`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string | null): string | null => {
    const v = str(name) ?? fallback;
    if (v === null) return null;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      return v.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an http(s) URL (got "${v}")`);
      return fallback;
    }
  };

  const dataDir = path.resolve(str('DATA_DIR') ?? './data');
  const databaseUrl = str('DATABASE_URL') ?? `sqlite://${path.join(dataDir, 'stash.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    problems.push(`DATABASE_URL must start with sqlite: or postgres:// (got "${databaseUrl}")`);
  }

  const driverRaw = str('STORAGE_DRIVER') ?? 'local';
  let driver: StorageDriver = 'local';
  if (driverRaw === 'local' || driverRaw === 's3') driver = driverRaw;
  else problems.push(`STORAGE_DRIVER must be local or s3 (got "${driverRaw}")`);
  const s3 = {
    endpoint: url('S3_ENDPOINT', null),
    region: str('S3_REGION') ?? 'us-east-1',
    bucket: str('S3_BUCKET'),
    accessKeyId: str('S3_ACCESS_KEY_ID'),
    secretAccessKey: str('S3_SECRET_ACCESS_KEY'),
    forcePathStyle: bool('S3_FORCE_PATH_STYLE', false),
  };
  if (driver === 's3') {
    for (const [name, value] of [
      ['S3_BUCKET', s3.bucket],
      ['S3_ACCESS_KEY_ID', s3.accessKeyId],
      ['S3_SECRET_ACCESS_KEY', s3.secretAccessKey],
    ] as const) {
      if (value === null) problems.push(`${name} is required when STORAGE_DRIVER=s3`);
    }
  }

  const rolesRaw = (str('STASH_ROLES') ?? 'site,api,files').split(',').map((r) => r.trim()).filter(Boolean);
  const roles = rolesRaw.filter((r): r is Role => (ROLES as readonly string[]).includes(r));
  const unknownRoles = rolesRaw.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknownRoles.length > 0 || roles.length === 0) {
    problems.push(`STASH_ROLES must list some of site, api, files (got "${rolesRaw.join(',')}")`);
  }

  const ports = { site: port('SITE_PORT', 8080), api: port('API_PORT', 8081), files: port('FILES_PORT', 8082) };
  const urls = {
    site: url('SITE_URL', `http://localhost:${ports.site}`) ?? '',
    api: url('API_URL', `http://localhost:${ports.api}`) ?? '',
    files: url('FILES_URL', `http://localhost:${ports.files}`) ?? '',
  };

  const adminUsername = str('ADMIN_USERNAME');
  if (adminUsername !== null && !/^[A-Za-z0-9_.-]{3,32}$/.test(adminUsername)) {
    problems.push('ADMIN_USERNAME must be 3-32 letters, digits, _, . or -');
  }
  const adminPassword = str('ADMIN_PASSWORD');
  if (adminPassword !== null && (adminPassword.length < 8 || adminPassword.length > 256)) {
    problems.push('ADMIN_PASSWORD must be 8-256 characters');
  }

  const captcha = (prefix: string, defaultVerify: string): CaptchaProviderConfig => ({
    siteKey: str(`${prefix}_SITE_KEY`),
    secret: str(`${prefix}_SECRET`),
    verifyUrl: url(`${prefix}_VERIFY_URL`, defaultVerify) ?? defaultVerify,
  });

  const logLevel = str('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const trustRaw = str('TRUST_PROXY');
  let trustProxy: boolean | string = false;
  if (trustRaw !== null) trustProxy = /^(1|true|yes|on)$/i.test(trustRaw) ? true : /^(0|false|no|off)$/i.test(trustRaw) ? false : trustRaw;

  const rateRaw = str('RATE_LIMITS') ?? 'on';
  if (rateRaw !== 'on' && rateRaw !== 'off') problems.push(`RATE_LIMITS must be on or off (got "${rateRaw}")`);

  // Design §6: limits hold per deployment, not per process, only if every API process counts in
  // one Redis. Checked here so a typo stops the start instead of silently counting in memory.
  const redisUrl = str('REDIS_URL');
  if (redisUrl !== null) {
    let ok = false;
    try {
      const u = new URL(redisUrl);
      ok = (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    if (!ok) problems.push(`REDIS_URL must be a redis:// or rediss:// URL with a host (got "${redactUrl(redisUrl)}")`);
  }

  const count = (name: string, fallback: number, max: number): number => {
    const v = str(name);
    if (v === null) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > max) {
      problems.push(`${name} must be a whole number from 0 to ${max} (got "${v}")`);
      return fallback;
    }
    return n;
  };

  const filesProcessesRaw = str('FILES_PROCESSES');
  let filesProcesses = 1;
  if (filesProcessesRaw === 'auto') filesProcesses = os.availableParallelism();
  else if (filesProcessesRaw !== null) {
    const n = Number(filesProcessesRaw);
    if (Number.isInteger(n) && n >= 1 && n <= MAX_FILES_PROCESSES) filesProcesses = n;
    else problems.push(`FILES_PROCESSES must be a whole number from 1 to ${MAX_FILES_PROCESSES}, or auto for one per core (got "${filesProcessesRaw}")`);
  }

  const filesAccelRedirect = str('FILES_ACCEL_REDIRECT');
  if (filesAccelRedirect !== null) {
    // A path nginx matches as a location prefix and that needs no escaping in a header.
    if (!/^\/((?!\.\.?\/)[A-Za-z0-9._~-]+\/)+$/.test(filesAccelRedirect)) {
      problems.push(`FILES_ACCEL_REDIRECT must be a path that starts and ends with /, of letters, digits, ., _, ~ and - (no . or .. between slashes) (got "${filesAccelRedirect}")`);
    }
  }

  const contactEmail = str('CONTACT_EMAIL');
  if (contactEmail !== null && !/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(contactEmail)) {
    problems.push(`CONTACT_EMAIL must be an e-mail address (got "${contactEmail}")`);
  }

  const sentryDsn = url('SENTRY_DSN', null);
  // The browser SDK refuses any other shape (and only says so in the visitor's console).
  if (sentryDsn !== null && !/^https?:\/\/\w+(:\w*)?@[\w.-]+(:\d+)?\/.+$/.test(sentryDsn)) {
    problems.push(`SENTRY_DSN must look like https://<public key>@<host>/<project id>, as Sentry shows it (got "${redactUrl(sentryDsn)}")`);
  }

  const wallets = parseDonationWallets(str('DONATION_WALLETS'));
  if (wallets.errors.length > 0) {
    problems.push(`DONATION_WALLETS ${wallets.errors.join('; ')}. Expected ${DONATION_WALLETS_FORMAT}`);
  }

  const hcaptcha = captcha('HCAPTCHA', 'https://api.hcaptcha.com/siteverify');
  const turnstile = captcha('TURNSTILE', 'https://challenges.cloudflare.com/turnstile/v0/siteverify');
  // Issue 8 item 13: a secret without its site key makes the server demand a captcha the page
  // cannot show, which locks everyone out; a site key alone shows a widget nothing checks.
  for (const [prefix, c] of [['HCAPTCHA', hcaptcha], ['TURNSTILE', turnstile]] as const) {
    if (c.secret !== null && c.siteKey === null) problems.push(`${prefix}_SECRET is set but ${prefix}_SITE_KEY is not: set both (or neither, to switch this captcha off)`);
    if (c.secret === null && c.siteKey !== null) problems.push(`${prefix}_SITE_KEY is set but ${prefix}_SECRET is not: set both (or neither, to switch this captcha off)`);
  }

  const config: Config = {
    dataDir,
    databaseUrl,
    storage: { driver, directWrites: boolOrAuto('STORAGE_DIRECT_WRITES'), s3 },
    roles,
    ports,
    host: str('HOST') ?? '0.0.0.0',
    urls,
    admin: { username: adminUsername, password: adminPassword },
    captcha: { hcaptcha, turnstile },
    sentryDsn,
    communityUrl: url('COMMUNITY_URL', null),
    donationWallets: wallets.wallets,
    siteName: str('SITE_NAME') ?? 'Stash',
    urlUploadAllowPrivate: bool('URL_UPLOAD_ALLOW_PRIVATE', false),
    trustProxy,
    logLevel,
    rateLimits: rateRaw !== 'off',
    redisUrl,
    filesRateLimit: count('FILES_RATE_LIMIT', 1200, 1_000_000),
    filesProcesses,
    filesAccelRedirect,
    // Behind a trusted proxy every socket comes from the proxy: a per-address cap would cap everyone.
    maxConnectionsPerIp: trustProxy === false ? count('MAX_CONNECTIONS_PER_IP', 64, 100_000) : count('MAX_CONNECTIONS_PER_IP', 0, 100_000),
    minBodyRate: count('MIN_BODY_RATE', 1024, 100_000_000),
    logClientIps: bool('LOG_CLIENT_IPS', false),
    serveSourceMaps: bool('SERVE_SOURCE_MAPS', false),
    contactEmail,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** A Redis URL may carry a password; the start-up message must not print it. */
function redactUrl(value: string): string {
  return value.replace(/\/\/[^@/]*@/, '//***@');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
