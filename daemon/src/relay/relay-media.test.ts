import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RelayMedia } from './relay-media.js';

let mediaDir: string;
let stored: Map<string, Buffer>;
let requests: string[];
let logs: string[];

/** The Gatekeeper's media routes, as a fetch. */
const fakeFetch: typeof fetch = async (input, init) => {
  const name = String(input).split('/relay/media/')[1] ?? '';
  const method = init?.method ?? 'GET';
  requests.push(`${method} ${name}`);
  if (method === 'HEAD') return new Response(null, { status: stored.has(name) ? 200 : 404 });
  stored.set(name, Buffer.from(init?.body as Uint8Array));
  return new Response('{}', { status: 201 });
};

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function media(token: string | null = 'jwt'): RelayMedia {
  return new RelayMedia({
    mediaDir,
    baseUrl: 'http://gatekeeper.test',
    token: () => token ?? undefined,
    log: (line) => logs.push(line),
    fetch: fakeFetch,
  });
}

beforeEach(async () => {
  mediaDir = await mkdtemp(join(tmpdir(), 'relay-media-'));
  stored = new Map();
  requests = [];
  logs = [];
});
afterEach(() => rm(mediaDir, { recursive: true, force: true }));

describe('RelayMedia', () => {
  it('names a file by its SHA-256 and uploads it once, even when asked for it at the same time', async () => {
    await writeFile(join(mediaDir, 'Logo.PNG'), 'picture');
    const relay = media();
    const names = await Promise.all([relay.relayName('Logo.PNG'), relay.relayName('Logo.PNG')]);
    expect(names).toEqual([`${sha('picture')}.png`, `${sha('picture')}.png`]);
    expect(await relay.relayName('Logo.PNG')).toBe(`${sha('picture')}.png`);
    expect(requests).toEqual([`HEAD ${sha('picture')}.png`, `PUT ${sha('picture')}.png`]);
    expect(stored.get(`${sha('picture')}.png`)?.toString()).toBe('picture');
  });

  it('a file the Gatekeeper has already is not sent again; an edited file is hashed and sent anew', async () => {
    await mkdir(join(mediaDir, 'alerts'));
    const file = join(mediaDir, 'alerts', 'ding.mp3');
    await writeFile(file, 'one');
    stored.set(`${sha('one')}.mp3`, Buffer.from('one'));
    const relay = media();
    expect(await relay.relayName('alerts/ding.mp3')).toBe(`${sha('one')}.mp3`);
    expect(requests).toEqual([`HEAD ${sha('one')}.mp3`]);
    await writeFile(file, 'two!');
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    expect(await relay.relayName('alerts/ding.mp3')).toBe(`${sha('two!')}.mp3`);
    expect(requests.slice(1)).toEqual([`HEAD ${sha('two!')}.mp3`, `PUT ${sha('two!')}.mp3`]);
  });

  it('a missing file, a path outside media/ or no licence: no name, one log line each', async () => {
    const relay = media();
    expect(await relay.relayName('gone.png')).toBeUndefined();
    expect(await relay.relayName('gone.png')).toBeUndefined();
    expect(await relay.relayName('../secret.png')).toBeUndefined();
    expect(logs).toHaveLength(2);
    await writeFile(join(mediaDir, 'a.png'), 'a');
    expect(await media(null).relayName('a.png')).toBeUndefined();
    expect(logs.at(-1)).toContain('not signed in');
    expect(requests).toEqual([]);
  });
});
