import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { untilAnswers } from './poll.ts';

/** Debian's nginx (`apt-get install nginx`; .ci/run installs it). */
export const hasNginx = (): boolean => spawnSync('sh', ['-c', 'command -v nginx']).status === 0;

/**
 * Whether the test file `file` can start nginx: in CI (.ci/run installs it) a missing one fails
 * the file rather than skipping it; elsewhere it is skipped, and says so.
 */
export function nginxForTests(file: string): boolean {
  const here = hasNginx();
  if (!here && process.env.CI) throw new Error('nginx is not installed; .ci/run installs it (apt-get install nginx)');
  if (!here) console.warn(`SKIPPED: ${file} needs nginx (apt-get install nginx)`);
  return here;
}

export interface Nginx {
  url: string;
  pid: number;
  /** What nginx wrote to its error log, for failure messages. */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * Debian's nginx in its own folder `work` with its own configuration, listening on a loopback
 * high port: `servers(port)` is what goes in its `http` block. Run by root (CI), its workers stay
 * root, so they read what the process under test stored (private to its user, 0600) as nginx
 * running as Stash's own user does in a deployment (README "Deployment at scale").
 */
export async function startNginx(work: string, servers: (port: number) => string): Promise<Nginx> {
  const port = await freePort();
  const conf = path.join(work, 'nginx.conf');
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  fs.writeFileSync(
    conf,
    `${user} worker_processes auto; daemon off; pid ${work}/nginx.pid; error_log ${work}/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000; open_file_cache max=1000;
  client_body_temp_path ${work}/body; proxy_temp_path ${work}/proxy; fastcgi_temp_path ${work}/fcgi; uwsgi_temp_path ${work}/uwsgi; scgi_temp_path ${work}/scgi;
  ${servers(port)} }`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', work], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  // nginx may stop before it has opened its log at all.
  const errors = () => (fs.existsSync(path.join(work, 'error.log')) ? fs.readFileSync(path.join(work, 'error.log'), 'utf8') : '');
  await untilAnswers(url, child, () => `(nginx's error log: ${errors()})`);
  return {
    url,
    pid: child.pid ?? 0,
    errors,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Connections each nginx worker keeps open to an upstream between requests (README's `keepalive`). */
const KEPT_CONNECTIONS = 32;

/**
 * The files host's blocks of README's nginx configuration ("Deployment at scale"): its `upstream`
 * (`upstream`, host:port) with connections kept open between requests, and its `server` on `port`:
 * downloads handed back with `X-Accel-Redirect` at `prefix` (FILES_ACCEL_REDIRECT) are read from
 * `filesDir` (DATA_DIR/storage/files) on local disk, or fetched from `storeOrigin` (the S3 store's
 * origin, which Stash's log names). Keep the two the same: the tests run this one.
 */
export function filesHostServer(options: { port: number; upstream: string; prefix: string } & ({ filesDir: string } | { storeOrigin: string })): string {
  const where = 'filesDir' in options ? localLocation(options.prefix, options.filesDir) : storeLocation(options.prefix, new URL(options.storeOrigin));
  const store = 'storeOrigin' in options ? keptUpstream('stash_s3', storeServer(new URL(options.storeOrigin))) : '';
  return `${keptUpstream('stash_files', options.upstream)}
  ${store}
  server {
    listen 127.0.0.1:${options.port};
    location / {
      proxy_pass http://stash_files;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Sendfile-Type X-Accel-Redirect;
    }
    ${where}
  }`;
}

/**
 * The API host's blocks of README's nginx configuration ("Deployment at scale"), without TLS:
 * upload bodies streamed to Stash as they come (`proxy_request_buffering off`), on connections
 * kept between requests. Keep the two the same: the tests run this one.
 */
export function apiHostServer(options: { port: number; upstream: string }): string {
  return `${keptUpstream('stash_api', options.upstream)}
  server {
    listen 127.0.0.1:${options.port};
    client_max_body_size 1100m;
    proxy_request_buffering off;
    proxy_read_timeout 300s;
    location / {
      proxy_pass http://stash_api;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }`;
}

/** The site host's blocks of README's nginx configuration, without TLS. Keep the two the same: the tests run this one. */
export function siteHostServer(options: { port: number; upstream: string }): string {
  const toStash = `proxy_pass http://stash_site;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;`;
  return `${keptUpstream('stash_site', options.upstream)}
  server {
    listen 127.0.0.1:${options.port};
    location / {
      ${toStash}
    }
    location = /share-target {
      client_max_body_size 0;
      proxy_request_buffering off;
      ${toStash}
    }
  }`;
}

/**
 * An `upstream` whose connections nginx keeps between requests: without `keepalive` each request
 * opened a connection of its own and closed it (HTTP/1.0), a handshake per request and a socket
 * left in TIME_WAIT for each, which a busy site runs out of ports with.
 */
function keptUpstream(name: string, server: string): string {
  return `upstream ${name} { server ${server}; keepalive ${KEPT_CONNECTIONS}; }`;
}

/** The store's host and port as an upstream's `server` names it (the scheme's port when the origin names none). */
function storeServer(origin: URL): string {
  return `${origin.hostname}:${origin.port || (origin.protocol === 'https:' ? '443' : '80')}`;
}

/** Stash's headers that nginx drops from a hand-over (it keeps `Content-Type`, `Content-Disposition` and `Cache-Control`): added back. */
const STASH_HEADERS = ['ETag', 'Last-Modified', 'X-Content-Type-Options', 'Content-Security-Policy', 'Cross-Origin-Resource-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
/** A header's name as nginx's variables spell it (`X-RateLimit-Limit` → `x_ratelimit_limit`). */
const varName = (header: string) => header.toLowerCase().replaceAll('-', '_');
const upstreamVar = (header: string) => `$upstream_http_${varName(header)}`;
const lines = (each: (header: string) => string) => STASH_HEADERS.map(each).join('\n      ');

function localLocation(prefix: string, filesDir: string): string {
  return `location ${prefix} {
      internal;
      alias ${filesDir}/;
      etag off;
      if_modified_since off;
      max_ranges 1;
      ${lines((h) => `add_header ${h} ${upstreamVar(h)};`)}
    }`;
}

/**
 * Stash's headers are read into variables before nginx asks the store, whose answer then fills
 * `$upstream_http_*`; the store's own headers of the same names are hidden. The read was signed
 * for the store's host (`X-Amz-SignedHeaders=host`), so that is the `Host` sent and the name its
 * certificate is checked against, not the upstream's.
 */
function storeLocation(prefix: string, store: URL): string {
  const kept = (h: string) => `$stash_${varName(h)}`;
  return `location ${prefix} {
      internal;
      ${lines((h) => `set ${kept(h)} ${upstreamVar(h)};`)}
      set $stash_range $upstream_http_x_stash_range;
      proxy_pass ${store.protocol}//stash_s3/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host ${store.host};
      proxy_ssl_name ${store.hostname};
      proxy_ssl_server_name on;
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate /etc/ssl/certs/ca-certificates.crt;
      proxy_buffering off;
      proxy_buffer_size 256k;
      proxy_buffers 4 256k;
      proxy_pass_request_headers off;
      proxy_intercept_errors on;
      proxy_set_header Range $stash_range;
      proxy_hide_header Content-Type;
      proxy_hide_header ETag;
      proxy_hide_header Last-Modified;
      proxy_hide_header Access-Control-Allow-Origin;
      proxy_hide_header x-amz-id-2;
      proxy_hide_header x-amz-request-id;
      proxy_hide_header x-amz-version-id;
      proxy_hide_header x-amz-server-side-encryption;
      proxy_hide_header x-amz-expiration;
      proxy_hide_header x-amz-storage-class;
      proxy_hide_header x-amz-content-sha256;
      proxy_hide_header x-amz-sdk-checksum-algorithm;
      proxy_hide_header x-amzn-requestid;
      ${lines((h) => `add_header ${h} ${kept(h)};`)}
    }`;
}

/** Each line of `config` as nginx reads it: comments gone, spaces collapsed, blank lines left out. */
export function directiveLines(config: string): string[] {
  return config
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().replace(/\s+/g, ' '))
    .filter(Boolean);
}

/** An `upstream` block's directives (written on one line), its servers left out when `servers` is false. */
export function upstreamDirectives(config: string, name: string, servers = true): string[] {
  const found = new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(directiveLines(config).join('\n'));
  if (!found) throw new Error(`no upstream ${name} in this configuration`);
  const all = found[1]!.split(';').map((d) => d.trim()).filter(Boolean);
  return servers ? all : all.filter((d) => !d.startsWith('server '));
}

/**
 * The directives of README's `server` block named `serverName`, and of the tested block `tested`
 * (one of this file's), made comparable: what names the machine (`listen`), TLS (`ssl_*`, the
 * deployment's own) and closing braces left out.
 */
export function sameServerBlocks(readme: string, serverName: string, tested: string): { documented: string[]; tested: string[] } {
  const lines = directiveLines(readme);
  const from = lines.indexOf(`server_name ${serverName};`);
  if (from === -1) throw new Error(`no server ${serverName} in README`);
  const ends = [lines.indexOf('server {', from), lines.indexOf('```', from)].filter((i) => i !== -1);
  const documented = lines.slice(from + 1, Math.min(...ends, lines.length)).filter((line) => !line.startsWith('ssl_') && line !== '}');
  const ran = directiveLines(tested);
  return { documented, tested: ran.slice(ran.findIndex((line) => line.startsWith('listen ')) + 1).filter((line) => line !== '}') };
}
