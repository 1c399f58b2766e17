import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { untilAnswers } from './poll.ts';

/** Debian's nginx (`apt-get install nginx`; .ci/run installs it). */
export const hasNginx = (): boolean => spawnSync('sh', ['-c', 'command -v nginx']).status === 0;

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

/**
 * The files host's `server` block of README's nginx configuration ("Deployment at scale"), in
 * front of `upstream` (host:port), on `port`: downloads handed back with `X-Accel-Redirect` are
 * read from `filesDir` (DATA_DIR/storage/files) at `prefix` (FILES_ACCEL_REDIRECT). Keep the two
 * the same: the tests run this one.
 */
export function filesHostServer(options: { port: number; upstream: string; filesDir: string; prefix: string }): string {
  return `server {
    listen 127.0.0.1:${options.port};
    location / {
      proxy_pass http://${options.upstream};
      proxy_buffering off;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Sendfile-Type X-Accel-Redirect;
    }
    location ${options.prefix} {
      internal;
      alias ${options.filesDir}/;
      etag off;
      if_modified_since off;
      max_ranges 1;
      add_header ETag $upstream_http_etag;
      add_header Last-Modified $upstream_http_last_modified;
      add_header X-Content-Type-Options $upstream_http_x_content_type_options;
      add_header Content-Security-Policy $upstream_http_content_security_policy;
      add_header Cross-Origin-Resource-Policy $upstream_http_cross_origin_resource_policy;
      add_header X-RateLimit-Limit $upstream_http_x_ratelimit_limit;
      add_header X-RateLimit-Remaining $upstream_http_x_ratelimit_remaining;
      add_header X-RateLimit-Reset $upstream_http_x_ratelimit_reset;
    }
  }`;
}
