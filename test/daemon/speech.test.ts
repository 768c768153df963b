// `speak` actions with the real espeak-ng: the WAV file in the cache and at
// /tts/<hash>.wav, the play-sound command for the page's audio queue, and the speech settings
// (maximum length, blocked words, per-viewer cooldown, on/off), the voice list and the sample.
import { chmod, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type DiskSpace,
  MAX_CACHE_BYTES,
  MAX_CACHE_FILES,
  MAX_WAITING_RENDERS,
  Speech,
} from '../../daemon/src/actions/speech.js';
import type { ServerMessage } from '../../shared/protocol/index.js';
import type { SettingsView } from '../../shared/settings.js';
import { api, rawRequest, startTestDaemon, subscribe, type TestDaemon } from '../support/daemon.js';
import { until } from '../support/wait.js';
import type { TestWsClient } from '../support/ws.js';

/** Seconds of sound in a PCM WAV file, read from its header (fmt's byte rate, data's size). */
function wavSeconds(bytes: Buffer): number {
  expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
  expect(bytes.toString('latin1', 8, 12)).toBe('WAVE');
  let at = 12;
  let byteRate = 0;
  while (at + 8 <= bytes.length) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ') byteRate = bytes.readUInt32LE(at + 16);
    // espeak-ng writes the data chunk's size as it streams; the file's length is the truth.
    if (id === 'data') return (bytes.length - at - 8) / byteRate;
    at += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

let daemon: TestDaemon;
let overlayId: string;
let client: TestWsClient;

beforeAll(async () => {
  daemon = await startTestDaemon();
  overlayId = daemon.overlays.list()[0]!.id;
  client = await subscribe(daemon, overlayId);
});
afterAll(async () => {
  client?.close();
  await daemon?.stop();
});

async function settings(tts: Partial<SettingsView['tts']>): Promise<void> {
  const current = (await (await api(daemon, 'GET', '/api/settings')).json()) as SettingsView;
  const res = await api(daemon, 'PUT', '/api/settings', { ...current, tts: { ...current.tts, ...tts } });
  expect(res.status).toBe(200);
}

beforeEach(async () => {
  await settings({ enabled: true, maxChars: 200, blockedWords: [], userCooldownMs: 0 });
});

async function speakRule(action: Record<string, unknown>, trigger = 'chat'): Promise<void> {
  const res = await api(daemon, 'PUT', '/api/rules', [
    { id: 'tts', trigger, actions: [{ kind: 'speak', overlayId, ...action }] },
  ]);
  expect(res.status).toBe(200);
}

const chat = (uniqueId: string, comment: string) => ({
  type: 'chat',
  user: { uniqueId, nickname: uniqueId },
  data: { comment },
});

let seen = 0;
/** The next play-sound for the page after those already looked at. */
async function nextSpeech(): Promise<Extract<ServerMessage, { type: 'overlay-command' }>> {
  const message = await until(() => {
    const found = client.received
      .slice(seen)
      .findIndex((m) => m.type === 'overlay-command' && m.command === 'play-sound');
    if (found === -1) return undefined;
    seen += found + 1;
    return client.received[seen - 1];
  }, 'a play-sound command');
  if (message.type !== 'overlay-command') throw new Error('not a command');
  return message;
}

async function logEntries(): Promise<{ ruleId: string; kind: string; ok: boolean; error?: string }[]> {
  return (await api(daemon, 'GET', '/api/actions/log')).json();
}

async function fetchSpeech(sound: string): Promise<Response> {
  return fetch(`${daemon.url}${sound}`);
}

describe('speak actions', () => {
  it('render the text with espeak-ng and send it to the page audio queue as play-sound for @page', async () => {
    await speakRule({ text: '{user.nickname} says {data.comment}', volume: 0.6 });
    seen = client.received.length;
    await api(daemon, 'POST', '/api/events', chat('anna', 'hello everybody, welcome to the stream'));
    const command = await nextSpeech();
    expect(command.widgetId).toBe('@page');
    expect(command.payload.volume).toBe(0.6);
    const sound = String(command.payload.sound);
    expect(sound).toMatch(/^\/tts\/[0-9a-f]{64}\.wav$/);

    const res = await fetchSpeech(sound);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const seconds = wavSeconds(Buffer.from(await res.arrayBuffer()));
    // Eight words at espeak-ng's usual pace: a couple of seconds, not silence and not a minute.
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(8);
    const entry = (await logEntries()).at(-1);
    expect(entry).toMatchObject({ ruleId: 'tts', kind: 'speak', ok: true });
  });

  it('say the same text from the cache, and speak a faster rate in less time', async () => {
    await speakRule({ text: 'the same words every time, {data.comment}' });
    seen = client.received.length;
    await api(daemon, 'POST', '/api/events', chat('a', 'again'));
    const first = String((await nextSpeech()).payload.sound);
    await api(daemon, 'POST', '/api/events', chat('b', 'again'));
    expect(String((await nextSpeech()).payload.sound)).toBe(first);

    await speakRule({ text: 'the same words every time, {data.comment}', rate: 2 });
    await api(daemon, 'POST', '/api/events', chat('c', 'again'));
    const fast = String((await nextSpeech()).payload.sound);
    expect(fast).not.toBe(first);
    const [slowWav, fastWav] = await Promise.all(
      [first, fast].map(async (s) => Buffer.from(await (await fetchSpeech(s)).arrayBuffer())),
    );
    expect(wavSeconds(fastWav!)).toBeLessThan(wavSeconds(slowWav!) * 0.75);
  });

  it('cut the text to tts.maxChars', async () => {
    await settings({ maxChars: 20 });
    await speakRule({ text: '{data.comment}' });
    seen = client.received.length;
    const long = 'this message goes on and on '.repeat(17);
    expect((await api(daemon, 'POST', '/api/events', chat('longwinded', long))).status).toBe(202);
    const wav = Buffer.from(
      await (await fetchSpeech(String((await nextSpeech()).payload.sound))).arrayBuffer(),
    );
    // 20 characters are a second or two; the whole comment would be well over half a minute.
    expect(wavSeconds(wav)).toBeLessThan(4);
  });

  it('drop a text with a blocked word (whole word, any case) and say why in the action log', async () => {
    await settings({ blockedWords: ['Spoiler'] });
    await speakRule({ text: '{data.comment}' });
    await api(daemon, 'POST', '/api/events', chat('v', 'the SPOILER is here'));
    await until(async () => {
      const entry = (await logEntries()).at(-1);
      return entry?.error?.includes('blocked word') ? entry : undefined;
    }, 'the blocked word in the log');
    // Inside another word it is not the word: "spoilers" is spoken.
    seen = client.received.length;
    await api(daemon, 'POST', '/api/events', chat('v', 'no spoilers please'));
    await nextSpeech();
    expect(client.received.slice(seen).filter((m) => m.type === 'overlay-command')).toHaveLength(0);
  });

  it("drop a blocked word hidden by the engine's markup or an invisible character, and say why", async () => {
    await settings({ blockedWords: ['spoiler'] });
    await speakRule({ text: '{data.comment}' });
    // Phoneme brackets, a tag, an embedded-command byte and a zero-width space each split the word for a
    // plain check, yet the engine would speak it whole.
    for (const comment of [
      'the spoi[[]]ler is here',
      'the spoi<>ler is here',
      'the spoi\u0001ler is here',
      'the spoi\u200bler is here',
    ]) {
      const before = (await logEntries()).length;
      seen = client.received.length;
      expect((await api(daemon, 'POST', '/api/events', chat('v', comment))).status).toBe(202);
      const entry = await until(async () => {
        const entries = await logEntries();
        return entries.length > before ? entries.at(-1) : undefined;
      }, 'the outcome');
      expect(entry, comment).toMatchObject({ kind: 'speak', ok: false });
      expect(entry?.error, comment).toContain('the blocked word "spoiler"');
      expect(
        client.received.slice(seen).some((m) => m.type === 'overlay-command'),
        comment,
      ).toBe(false);
    }
  });

  it('speak for one viewer at most once per tts.userCooldownMs, others still heard', async () => {
    await settings({ userCooldownMs: 60_000 });
    await speakRule({ text: '{user.nickname}: {data.comment}' });
    seen = client.received.length;
    await api(daemon, 'POST', '/api/events', chat('spammer', 'one'));
    await nextSpeech();
    await api(daemon, 'POST', '/api/events', chat('Spammer', 'two'));
    await api(daemon, 'POST', '/api/events', chat('other', 'three'));
    await nextSpeech();
    const log = await until(async () => {
      const entries = (await logEntries()).filter((e) => e.kind === 'speak').slice(-2);
      return entries.length === 2 && entries.every((e) => e.error !== undefined || e.ok)
        ? entries
        : undefined;
    }, 'two outcomes');
    expect(log.some((e) => !e.ok && e.error?.includes('Spammer'))).toBe(true);
    expect(client.received.slice(seen).filter((m) => m.type === 'overlay-command')).toHaveLength(0);
  });

  it('say nothing while speech is turned off, and log that', async () => {
    await settings({ enabled: false });
    await speakRule({ text: '{data.comment}' });
    seen = client.received.length;
    await api(daemon, 'POST', '/api/events', chat('x', 'are you there'));
    const entry = await until(async () => {
      const last = (await logEntries()).at(-1);
      return last?.error?.includes('turned off') ? last : undefined;
    }, 'the refusal in the log');
    expect(entry.ok).toBe(false);
    expect(client.received.slice(seen).some((m) => m.type === 'overlay-command')).toBe(false);
  });

  it('are refused with the field named when their fields are wrong, and nothing changes', async () => {
    await speakRule({ text: 'kept' });
    for (const [action, field] of [
      [{ text: '' }, 'actions.0.text'],
      [{ text: 'x', rate: 3 }, 'actions.0.rate'],
      [{ text: 'x', volume: -1 }, 'actions.0.volume'],
      [{ text: 'x', voice: '--output=/etc/passwd' }, 'actions.0.voice'],
      [{ text: 'x', overlayId: 'nope' }, 'actions.0.overlayId'],
    ] as const) {
      const res = await api(daemon, 'PUT', '/api/rules', [
        { id: 'bad', trigger: 'chat', actions: [{ kind: 'speak', overlayId, ...action }] },
      ]);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain(field);
    }
    const rules = (await (await api(daemon, 'GET', '/api/rules')).json()) as { id: string }[];
    expect(rules.map((r) => r.id)).toEqual(['tts']);
  });
});

describe('/tts/ files', () => {
  it('answer only names of the cache form, and nothing outside the cache', async () => {
    for (const path of [
      `/tts/${'0'.repeat(64)}.wav`,
      '/tts/abc.wav',
      `/tts/${'A'.repeat(64)}.wav`,
      '/tts/..%2fsettings.json',
      '/tts/%2e%2e/admin.key',
      `/tts/${'0'.repeat(64)}.wav.tmp`,
    ]) {
      const res = await rawRequest(daemon.port, { path, headers: { Host: `127.0.0.1:${daemon.port}` } });
      expect([403, 404], path).toContain(res.status);
      expect(res.body).not.toContain('RIFF');
    }
  });
});

describe('voices and the sample', () => {
  it('lists espeak-ng and its voices', async () => {
    const list = (await (await api(daemon, 'GET', '/api/tts/voices')).json()) as {
      engine: string;
      voices: { id: string; name: string }[];
    };
    expect(list.engine).toBe('espeak-ng');
    expect(list.voices.length).toBeGreaterThan(10);
    expect(list.voices.some((v) => v.id === 'en-us')).toBe(true);
  });

  it('speaks a sample in a chosen voice, and refuses bad fields by name', async () => {
    const res = await api(daemon, 'POST', '/api/tts/sample', { text: 'Bonjour à tous', voice: 'fr' });
    expect(res.status).toBe(200);
    const { sound } = (await res.json()) as { sound: string };
    expect(wavSeconds(Buffer.from(await (await fetchSpeech(sound)).arrayBuffer()))).toBeGreaterThan(0.3);
    const bad = await api(daemon, 'POST', '/api/tts/sample', { rate: 9 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('rate');
  });
});

describe('the speech cache', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps a file an hour after its last use, then sweeps it', async () => {
    let now = Date.now();
    const speech = new Speech({ dir, now: () => now });
    const hash = await speech.render('kept for an hour');
    const file = join(dir, `${hash}.wav`);
    // Used again 50 minutes later: its hour starts again.
    now += 50 * 60_000;
    await utimes(file, new Date(now - 50 * 60_000), new Date(now - 50 * 60_000));
    expect(await speech.render('kept for an hour')).toBe(hash);
    expect((await stat(file)).mtimeMs).toBeGreaterThan(now - 1000);
    now += 59 * 60_000;
    await speech.sweep();
    expect(await readdir(dir)).toEqual([`${hash}.wav`]);
    now += 2 * 60_000;
    await speech.sweep();
    expect(await readdir(dir)).toEqual([]);
  });

  it('says what to install when the engine is missing', async () => {
    const speech = new Speech({ dir, env: { PATH: dir }, platform: 'linux' });
    await expect(speech.render('hello')).rejects.toThrow(/install espeak-ng/);
    expect(await speech.voices()).toEqual([]);
  });

  it('renders a text that looks like an option as words, never as an option', async () => {
    const speech = new Speech({ dir });
    const hash = await speech.render('-w /tmp/elsewhere.wav --voices');
    expect(await readdir(dir)).toEqual([`${hash}.wav`]);
  });
});

describe('what the engine is given', () => {
  let dir: string;
  let bin: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-'));
    bin = await mkdtemp(join(tmpdir(), 'tts-bin-'));
    // An espeak-ng that writes down its arguments and what it read, then a short silent WAV.
    const fake = join(bin, 'espeak-ng');
    await writeFile(
      fake,
      `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c)).on('end', () => {
  fs.appendFileSync(${JSON.stringify(join(bin, 'calls.jsonl'))}, JSON.stringify({ args, stdin: Buffer.concat(chunks).toString('utf8') }) + '\\n');
  const wav = Buffer.alloc(44);
  wav.write('RIFF', 0, 'latin1'); wav.writeUInt32LE(36, 4); wav.write('WAVE', 8, 'latin1');
  fs.writeFileSync(args[args.indexOf('-w') + 1], wav);
});
`,
    );
    await chmod(fake, 0o755);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(bin, { recursive: true, force: true });
  });

  async function calls(): Promise<{ args: string[]; stdin: string }[]> {
    const text = await readFile(join(bin, 'calls.jsonl'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { args: string[]; stdin: string });
  }

  it('is plain text on stdin: no control character, no phoneme brackets, no tag', async () => {
    const speech = new Speech({ dir, env: { PATH: bin }, platform: 'linux' });
    await speech.render('\u000120A\u0001 whisper [[h@l"oU]] <prosody rate="x-fast">now</prosody>\u200b!');
    const [call] = await calls();
    expect(call?.stdin).toBe('20A whisper h@l"oU prosody rate="x-fast"now/prosody!');
    expect(call?.stdin).not.toMatch(/[\p{Cc}\p{Cf}[\]<>]/u);
    // The text is never on the command line; no markup mode (-m) and no phoneme option is asked for.
    expect(call?.args).toEqual(['-w', expect.stringMatching(/\.tmp$/), '-s', '175', '--stdin']);
  });

  it('refuses a text with a blocked word once it is plain, without running the engine', async () => {
    const speech = new Speech({ dir, env: { PATH: bin }, platform: 'linux', blockedWords: () => ['secret'] });
    await expect(speech.render('the se[[]]cret word')).rejects.toThrow(
      'dropped: the text has the blocked word "secret"',
    );
    await expect(speech.render('the se\u0001cret word')).rejects.toThrow('blocked word "secret"');
    await expect(speech.render('[[ ]] \u0001\u0002')).rejects.toThrow(/nothing to say/);
    expect(await calls()).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('the speech cache bounds (espeak-ng)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const wavs = async () => (await readdir(dir)).filter((n) => n.endsWith('.wav')).sort();
  const bytes = async () => {
    let sum = 0;
    for (const name of await readdir(dir)) sum += (await stat(join(dir, name))).size;
    return sum;
  };

  it('has documented defaults: 200 MiB, 2,000 files, 20 renders waiting', () => {
    expect([MAX_CACHE_BYTES, MAX_CACHE_FILES, MAX_WAITING_RENDERS]).toEqual([200 * 1024 * 1024, 2000, 20]);
  });

  it('keeps at most maxCacheFiles files, the least recently used going first', async () => {
    let now = Date.now();
    const speech = new Speech({ dir, maxCacheFiles: 3, now: () => now });
    const [a, b, c] = [
      await speech.render('first line'),
      await speech.render('second line'),
      await speech.render('third line'),
    ];
    now += 1000;
    // "first line" is said again: it is now the most recently used, and "second line" the least.
    expect(await speech.render('first line')).toBe(a);
    const d = await speech.render('fourth line');
    expect(await wavs()).toEqual([a, c, d].map((h) => `${h}.wav`).sort());
    const e = await speech.render('fifth line');
    expect(await wavs()).toEqual([a, d, e].map((h) => `${h}.wav`).sort());
    expect(b).not.toBe(a);
  });

  it('keeps at most maxCacheBytes, the least recently used going first, and never the file just made', async () => {
    const probe = new Speech({ dir: join(dir, 'probe') });
    const one = (await stat(join(dir, 'probe', `${await probe.render('how big is one line of chat')}.wav`)))
      .size;
    await rm(join(dir, 'probe'), { recursive: true });
    // Room for about two and a half lines.
    const speech = new Speech({ dir, maxCacheBytes: Math.floor(one * 2.5) });
    const hashes: string[] = [];
    for (const text of [
      'how big is one line of chat',
      'how big is two lines of chat',
      'how big is red lines of chat',
      'how big is all lines of chat',
    ])
      hashes.push(await speech.render(text));
    expect(await bytes()).toBeLessThanOrEqual(Math.floor(one * 2.5));
    expect(await wavs()).toEqual(
      hashes
        .slice(-2)
        .map((h) => `${h}.wav`)
        .sort(),
    );
    // A single text over the bound is still kept: it is about to be played.
    const tiny = new Speech({ dir, maxCacheBytes: 10 });
    const last = await tiny.render('alone over the bound');
    expect(await wavs()).toEqual([`${last}.wav`]);
  });

  it('holds the bounds over files a previous run left, oldest modification first', async () => {
    const first = new Speech({ dir });
    const old = [await first.render('left from yesterday'), await first.render('left from this morning')];
    await utimes(
      join(dir, `${old[0]}.wav`),
      new Date(Date.now() - 7200_000),
      new Date(Date.now() - 7200_000),
    );
    await utimes(
      join(dir, `${old[1]}.wav`),
      new Date(Date.now() - 3600_000),
      new Date(Date.now() - 3600_000),
    );
    const next = new Speech({ dir, maxCacheFiles: 2 });
    const fresh = await next.render('said after the restart');
    expect(await wavs()).toEqual([old[1], fresh].map((h) => `${h}.wav`).sort());
  });

  it(`drops a text when ${MAX_WAITING_RENDERS} are already waiting for the engine, and says so`, async () => {
    // Every render is held at the disk check until all of them were asked for: two take the engine,
    // twenty wait, the rest are dropped at once.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let arrived = 0;
    const disk = async (): Promise<DiskSpace> => {
      if (++arrived === 30) open();
      await gate;
      return { free: 100 * 1024 ** 3, size: 200 * 1024 ** 3 };
    };
    const speech = new Speech({ dir, diskSpace: disk });
    const asked = Array.from({ length: 30 }, (_, i) => speech.render(`backlog line number ${i}`));
    const outcomes = await Promise.allSettled(asked);
    const dropped = outcomes.filter((o) => o.status === 'rejected');
    expect(dropped).toHaveLength(30 - 2 - MAX_WAITING_RENDERS);
    for (const o of dropped)
      expect(String((o as PromiseRejectedResult).reason)).toContain(
        `dropped: ${MAX_WAITING_RENDERS} texts are already waiting for the speech engine`,
      );
    expect(await wavs()).toHaveLength(2 + MAX_WAITING_RENDERS);
    // The backlog drained: the next text is rendered again.
    await speech.render('after the storm');
  }, 60_000);

  it('renders nothing while the disk is nearly full, says how full, and speaks again once there is room', async () => {
    let free = 100 * 1024 * 1024;
    const disk = async (): Promise<DiskSpace> => ({ free, size: 500 * 1024 ** 3 });
    const speech = new Speech({ dir, diskSpace: disk });
    await expect(speech.render('the disk is full')).rejects.toThrow(
      `skipped: the disk of ${dir} is nearly full (100 MiB free; speech needs 512 MiB)`,
    );
    expect(await wavs()).toEqual([]);
    // A small disk: 5 % of it is enough.
    const small = new Speech({
      dir,
      diskSpace: async () => ({ free: 300 * 1024 * 1024, size: 4 * 1024 ** 3 }),
    });
    await small.render('a small disk with room');
    free = 600 * 1024 * 1024;
    const hash = await speech.render('the disk is full');
    expect(await wavs()).toContain(`${hash}.wav`);
    // A file already rendered is still said from the cache while the disk is full.
    free = 0;
    expect(await speech.render('the disk is full')).toBe(hash);
  });

  it('asks the real disk by default', async () => {
    await new Speech({ dir }).render('the real disk has room');
    expect(await wavs()).toHaveLength(1);
  });
});
