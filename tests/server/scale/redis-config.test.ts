import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../server/config.ts';

describe('REDIS_URL (shared rate limits)', () => {
  const problemsOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems.join('\n');
    }
    throw new Error('expected a ConfigError');
  };

  it('stops the start on a URL that is not redis:// or rediss://', () => {
    expect(problemsOf({ REDIS_URL: 'http://127.0.0.1:6379' })).toMatch(/REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(problemsOf({ REDIS_URL: '127.0.0.1:6379' })).toMatch(/REDIS_URL/);
    expect(problemsOf({ REDIS_URL: 'redis://' })).toMatch(/REDIS_URL/);
  });

  it('lists a bad REDIS_URL with the other bad variables, without printing its password', () => {
    const problems = problemsOf({ REDIS_URL: 'memcached://user:s3cret@cache:11211', RATE_LIMITS: 'maybe' });
    expect(problems).toMatch(/REDIS_URL/);
    expect(problems).toMatch(/RATE_LIMITS/);
    expect(problems).not.toContain('s3cret');
  });

  it('accepts redis:// and rediss:// and leaves Redis off when unset', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl).toBe('redis://127.0.0.1:6379/2');
    expect(loadConfig({ REDIS_URL: 'rediss://:pw@redis.example.com:6380' }).redisUrl).toBe('rediss://:pw@redis.example.com:6380');
    expect(loadConfig({}).redisUrl).toBeNull();
    expect(loadConfig({ REDIS_URL: '  ' }).redisUrl).toBeNull();
  });
});
