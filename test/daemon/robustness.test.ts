// Bad input never costs the streamer an overlay or a lock: saturating widget state,
// lowercase overlay ids, and a deleted unreadable rules.json lifting its lock.
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_RENDERED_PAYLOAD_BYTES } from '../../daemon/src/rules/engine.js';
import type { SourceContext } from '../../daemon/src/sources/source.js';
import type { StreamEvent } from '../../shared/protocol/index.js';
import { api, makeDataDir, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';

const MAX = Number.MAX_SAFE_INTEGER;
const running: TestDaemon[] = [];
const dirs: string[] = [];

async function start(dataDir?: string): Promise<TestDaemon> {
  const daemon = await startTestDaemon(dataDir ? { dataDir } : {});
  running.push(daemon);
  return daemon;
}

/** A data dir of this test's own (kept across restarts), with no rules. */
async function emptyDataDir(): Promise<string> {
  const dataDir = await makeDataDir();
  dirs.push(dataDir);
  await writeFile(join(dataDir, 'rules.json'), '[]\n');
  return dataDir;
}

afterEach(async () => {
  for (const daemon of running.splice(0)) await daemon.stop();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('widget state saturates at Number.MAX_SAFE_INTEGER', () => {
  it('the largest valid gift, twice, leaves an overlay that still loads after a restart', async () => {
    const dataDir = await emptyDataDir();
    const first = await start(dataDir);
    const created = await api(first, 'POST', '/api/overlays', {
      name: 'Whales',
      width: 1920,
      height: 1080,
      widgets: [
        { id: 'goal', type: 'goal', x: 0, y: 0, source: 'diamonds', target: 1000 },
        { id: 'count', type: 'counter', x: 0, y: 100, source: 'diamonds' },
        { id: 'top', type: 'top-gifters', x: 0, y: 200 },
      ],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const gift = {
      type: 'gift',
      user: { uniqueId: 'whale', nickname: 'Whale' },
      data: { giftName: 'Universe', repeatCount: MAX, diamondCount: MAX },
    };
    for (let i = 0; i < 2; i++) expect((await api(first, 'POST', '/api/events', gift)).status).toBe(202);
    // The values events keep are written to live-values.json (events never rewrite the overlay file).
    await waitFor(async () => {
      const text = await readFile(join(dataDir, 'live-values.json'), 'utf8').catch(() => '');
      return text.includes(`"current": ${MAX}`);
    });
    await first.close();

    const second = await start(dataDir);
    const res = await api(second, 'GET', `/api/overlays/${id}`);
    expect(res.status).toBe(200);
    const overlay = (await res.json()) as { widgets: Record<string, unknown>[] };
    const byId = Object.fromEntries(overlay.widgets.map((w) => [w.id, w]));
    expect(byId.goal?.current).toBe(MAX);
    expect(byId.count?.value).toBe(MAX);
    expect((byId.top?.entries as { diamonds: number }[] | undefined)?.[0]?.diamonds).toBe(MAX);
    expect((await fetch(`${second.url}/overlay/${id}`)).status).toBe(200);
  });
});

describe('overlay ids are lowercase UUIDs', () => {
  it('a file with an uppercase name or id is reported unreadable, unreachable, not counted, never written', async () => {
    const dataDir = await emptyDataDir();
    const first = await start(dataDir);
    const before = first.overlays.list().length;
    await first.close();

    const upper = 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D';
    const upperFile = join(dataDir, 'overlays', `${upper}.json`);
    const upperText = `${JSON.stringify({ id: upper, name: 'From uuidgen', width: 1920, height: 1080, widgets: [] })}\n`;
    await writeFile(upperFile, upperText);
    const mixed = 'b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
    const mixedFile = join(dataDir, 'overlays', `${mixed}.json`);
    const mixedText = `${JSON.stringify({ id: mixed.toUpperCase(), name: 'Id edited by hand', width: 1920, height: 1080, widgets: [] })}\n`;
    await writeFile(mixedFile, mixedText);

    const daemon = await start(dataDir);
    expect(daemon.overlays.list()).toHaveLength(before);
    const listed = (await (await api(daemon, 'GET', '/api/overlays')).json()) as { id: string }[];
    expect(listed.map((o) => o.id.toLowerCase())).not.toContain(upper.toLowerCase());
    expect(listed.map((o) => o.id)).not.toContain(mixed);
    for (const id of [upper, upper.toLowerCase(), mixed]) {
      expect((await api(daemon, 'GET', `/api/overlays/${id}`)).status).toBe(404);
    }
    expect(daemon.logs.join('\n')).toMatch(/lowercase/);
    // Nothing rewrote the files or made twins of them.
    expect(await readFile(upperFile, 'utf8')).toBe(upperText);
    expect(await readFile(mixedFile, 'utf8')).toBe(mixedText);
    const files = await readdir(join(dataDir, 'overlays'));
    expect(files.filter((f) => f.toLowerCase() === `${upper.toLowerCase()}.json`)).toHaveLength(1);
  });

  it('a hand edit that uppercases the id of a loaded overlay is not overwritten by the next save', async () => {
    const daemon = await start();
    const overlay = daemon.overlays.list()[0]!;
    const file = join(daemon.dataDir.overlaysDir, `${overlay.id}.json`);
    const edited = `${JSON.stringify({ ...overlay, id: overlay.id.toUpperCase(), name: 'Edited' })}\n`;
    await writeFile(file, edited);
    await waitFor(() => daemon.logs.some((l) => l.includes('not lowercase')));
    const { id: _id, ...input } = overlay;
    const put = await api(daemon, 'PUT', `/api/overlays/${overlay.id}`, {
      ...input,
      name: 'From the dashboard',
    });
    expect(put.status).toBe(409);
    expect(await readFile(file, 'utf8')).toBe(edited);
  });
});

describe('deleting an unreadable file lifts its lock at once', () => {
  it('rules.json: 409 while it does not parse, 200 right after it is deleted, without a restart', async () => {
    const daemon = await start();
    const rulesFile = daemon.dataDir.rulesFile;
    await writeFile(rulesFile, '[{"broken": ');
    await waitFor(() => daemon.logs.some((l) => l.includes('cannot read')));
    expect((await api(daemon, 'PUT', '/api/rules', [])).status).toBe(409);
    await rm(rulesFile);
    await waitFor(async () => (await api(daemon, 'PUT', '/api/rules', [])).status === 200);
    expect(JSON.parse(await readFile(rulesFile, 'utf8'))).toEqual([]);
  });
});

describe('media operations resolve real paths first', () => {
  it('DELETE through a symlinked folder inside media/ never deletes a file outside it', async () => {
    const daemon = await start();
    const outside = await makeDataDir();
    dirs.push(outside);
    await writeFile(join(outside, 'precious.png'), 'not yours');
    await symlink(outside, join(daemon.dataDir.mediaDir, 'linked'));
    const res = await api(daemon, 'DELETE', '/api/media/linked/precious.png');
    expect([403, 404]).toContain(res.status);
    expect(await readFile(join(outside, 'precious.png'), 'utf8')).toBe('not yours');
  });
});

describe('bad input is a 4xx, never a 500', () => {
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('JSON nested deeper than 64 levels: 400 on commands, rules, events and overlays; 64 levels still parse', async () => {
    const daemon = await start();
    const id = daemon.overlays.list()[0]!.id;
    const tooDeep = deep(200_000);
    const targets: [string, string, (inner: string) => string][] = [
      ['POST', `/api/overlays/${id}/commands`, (x) => `{"widgetId":"w","command":"c","payload":{"a":${x}}}`],
      ['PUT', '/api/rules', (x) => `[${x}]`],
      [
        'POST',
        '/api/events',
        (x) => `{"type":"chat","user":{"uniqueId":"u","nickname":"n"},"data":{"comment":"hi","x":${x}}}`,
      ],
      ['POST', '/api/overlays', (x) => `{"name":"n","width":10,"height":10,"widgets":${x}}`],
    ];
    for (const [method, path, wrap] of targets) {
      const res = await api(daemon, method, path, wrap(tooDeep));
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('64');
    }
    // At the limit it is only the schema that decides: an event with 60 levels of extra data is accepted.
    const ok = await api(daemon, 'POST', '/api/events', targets[2]![2](deep(60)));
    expect(ok.status).toBe(202);
    expect(daemon.logs.join('\n')).not.toMatch(/unhandled/);
  });

  it('a media name too long for the file system: 400; a folder or a path under a file: 409', async () => {
    const daemon = await start();
    const put = (name: string) =>
      fetch(`${daemon.url}/api/media/${name}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'image/png' },
        body: 'png',
      });
    const long = `${'a'.repeat(248)}.png`;
    const tooLong = await put(long);
    expect(tooLong.status).toBe(400);
    await mkdir(join(daemon.dataDir.mediaDir, 'folder.png'));
    expect((await put('folder.png')).status).toBe(409);
    await writeFile(join(daemon.dataDir.mediaDir, 'file.png'), 'x');
    expect((await put('file.png/inner.png')).status).toBe(409);
    expect(daemon.logs.join('\n')).not.toMatch(/unhandled/);
  });
});

describe('every response goes through the front door', () => {
  async function rawLine(port: number, line: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(`${line}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`),
      );
      let out = '';
      socket.on('data', (chunk) => {
        out += chunk;
      });
      socket.on('close', () => resolve(out));
    });
  }

  it.each(['GET http://evil.example/status HTTP/1.1', 'OPTIONS * HTTP/1.1'])(
    '%s: nosniff and the Host check',
    async (line) => {
      const daemon = await start();
      const head = (await rawLine(daemon.port, line)).split('\r\n\r\n')[0] ?? '';
      expect(head).toMatch(/^HTTP\/1\.1 403 /);
      expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
    },
  );
});

describe('limits on what a rule renders, and on who reads the data dir', () => {
  it('a template that expands past the payload cap sends nothing and says why', async () => {
    const daemon = await start();
    const id = daemon.overlays.list()[0]!.id;
    const rule = {
      id: 'echo',
      trigger: 'chat',
      actions: [
        {
          overlayId: id,
          widgetId: 'w',
          command: 'set-text',
          payload: { text: '{data.comment}'.repeat(200) },
        },
      ],
    };
    expect((await api(daemon, 'PUT', '/api/rules', [rule])).status).toBe(200);
    const comment = 'x'.repeat(Math.ceil(MAX_RENDERED_PAYLOAD_BYTES / 200) + 10);
    const res = await api(daemon, 'POST', '/api/events', {
      type: 'chat',
      user: { uniqueId: 'u', nickname: 'n' },
      data: { comment },
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { firedRules: string[] }).firedRules).toEqual([]);
    await waitFor(() => daemon.logs.some((l) => l.includes('over the limit')));
  });

  it('creates the data dir and its folders mode 0700', async () => {
    const parent = await makeDataDir();
    dirs.push(parent);
    const dataDir = join(parent, 'fresh');
    const daemon = await start(dataDir);
    for (const dir of [dataDir, daemon.dataDir.overlaysDir, daemon.dataDir.mediaDir]) {
      expect((await stat(dir)).mode & 0o777, dir).toBe(0o700);
    }
  });
});

describe('no error ends the daemon', () => {
  it('an error nothing caught reaches the last resort: one line, and the daemon keeps serving; its close removes the handler', async () => {
    type Listener = (err: unknown) => void;
    const listeners = (event: 'uncaughtException' | 'unhandledRejection'): Listener[] =>
      event === 'uncaughtException'
        ? (process.listeners('uncaughtException') as Listener[])
        : (process.listeners('unhandledRejection') as Listener[]);
    const before = {
      uncaughtException: listeners('uncaughtException'),
      unhandledRejection: listeners('unhandledRejection'),
    };
    const daemon = await start();
    const added = (event: 'uncaughtException' | 'unhandledRejection') =>
      listeners(event).filter((l) => !before[event].includes(l));
    const [onException] = added('uncaughtException');
    const [onRejection] = added('unhandledRejection');
    expect(onException).toBeTypeOf('function');
    expect(onRejection).toBeTypeOf('function');
    // What Node would hand it for a throw in a timer and for a promise nobody caught.
    onException?.(new Error('a timer threw'));
    onRejection?.(new Error('a promise failed'));
    expect(daemon.logs.filter((l) => l.includes('an error nothing handled, the daemon goes on'))).toEqual([
      expect.stringContaining('a timer threw'),
      expect.stringContaining('a promise failed'),
    ]);
    expect((await api(daemon, 'GET', '/status')).status).toBe(200);
    await daemon.stop();
    running.splice(running.indexOf(daemon), 1);
    expect(added('uncaughtException')).toEqual([]);
    expect(added('unhandledRejection')).toEqual([]);
  });

  it('a rules.json that puts a placeholder in a webhook host is not used after a restart; a chat line with a space leaves the daemon serving', async () => {
    const dataDir = await emptyDataDir();
    await writeFile(
      join(dataDir, 'rules.json'),
      JSON.stringify([
        {
          id: 'rule-qly30d',
          name: 'Chat hook',
          trigger: 'chat',
          actions: [{ kind: 'webhook', url: 'http://{data.comment}.example/x' }],
        },
      ]),
    );
    const daemon = await start(dataDir);
    const posted = await api(daemon, 'POST', '/api/events', {
      type: 'chat',
      user: { uniqueId: 'v', nickname: 'V' },
      data: { comment: 'hello there' },
    });
    expect(posted.status).toBe(202);
    expect(((await posted.json()) as { firedRules: string[] }).firedRules).toEqual([]);
    expect((await api(daemon, 'GET', '/status')).status).toBe(200);
    expect(daemon.logs.join('\n')).toContain('0.actions.0.url');
  });
});

describe('a source event that cannot be handled', () => {
  it('is one log line naming the platform and the event; nothing is thrown back into the source, and the daemon serves', async () => {
    let ctx: SourceContext | undefined;
    const daemon = await startTestDaemon({
      sourceFactory: (entry, context) => {
        ctx = context;
        return {
          platform: entry.platform,
          channel: entry.channel,
          start() {},
          async stop() {},
          report: () => ({ platform: entry.platform, channel: entry.channel, state: 'connected' }),
        };
      },
      sources: [{ platform: 'twitch', channel: 'streamer', enabled: true }],
    });
    running.push(daemon);
    await waitFor(() => ctx !== undefined, 3000, 'the source started');
    // An event whose fields cannot even be read (a platform library gone wrong).
    const broken = {
      type: 'chat',
      platform: 'twitch',
      user: { uniqueId: 'v', nickname: 'V' },
      get data(): never {
        throw new Error('the library broke');
      },
    } as unknown as StreamEvent;
    expect(() => ctx!.emit(broken)).not.toThrow();
    expect(
      daemon.logs.some((l) =>
        l.startsWith('[sources] a twitch chat event could not be handled: the library broke'),
      ),
    ).toBe(true);
    expect((await api(daemon, 'GET', '/status')).status).toBe(200);
  });
});
