// `overlay-daemon backup` and `restore` as a streamer runs them (decisions-2 §7): a backup of a running
// daemon, a restore that keeps the previous state, and hostile or broken archives that change nothing.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as tar from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import { killCliProcesses, runCli } from '../support/cli.js';
import { api, makeDataDir, startTestDaemon } from '../support/daemon.js';

afterEach(() => killCliProcesses());

const chat = (comment: string) => ({
  type: 'chat',
  user: { uniqueId: 'ann', nickname: 'Ann' },
  data: { comment },
});

/** Every file under `dir` with a hash of its content: what "nothing changed" compares. */
async function snapshot(dir: string, base = dir): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(out, await snapshot(path, base));
    else
      out[path.slice(base.length + 1)] = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
  }
  return out;
}

/** A tar.gz written block by block, so a test can put in it what tar's own writer never would. */
function rawArchive(
  members: { path: string; type?: string; body?: string; size?: number; linkpath?: string }[],
): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const body = Buffer.from(m.body ?? '');
    const header = new tar.Header({
      path: m.path,
      type: (m.type ?? 'File') as 'File',
      size: m.size ?? body.length,
      mode: 0o644,
      mtime: new Date(0),
      ...(m.linkpath ? { linkpath: m.linkpath } : {}),
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (m.size === undefined && body.length) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const MANIFEST = JSON.stringify({ format: 1, createdAt: '2026-11-01T00:00:00.000Z', includesSecrets: false });

describe('backup and restore', () => {
  it('backs up a running daemon and restores it, keeping what was there under backups/', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    const overlayId = daemon.overlays.list()[0]!.id;
    let file: string;
    try {
      await api(daemon, 'PUT', '/api/rules', [
        {
          id: 'kept',
          trigger: 'gift',
          actions: [
            { overlayId, widgetId: 'alerts', command: 'show-alert', payload: { text: 'x', duration: 500 } },
          ],
        },
      ]);
      const settings = (await (await api(daemon, 'GET', '/api/settings')).json()) as Record<string, unknown>;
      await api(daemon, 'PUT', '/api/settings', {
        ...settings,
        obs: { url: 'ws://127.0.0.1:4455', password: 'obs-secret' },
      });
      await fetch(`${daemon.url}/api/media/clips/ding.wav`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${daemon.adminKey}` },
        body: 'RIFF....WAVE',
      });
      for (let i = 0; i < 30; i++) await api(daemon, 'POST', '/api/events', chat(`before ${i}`));

      file = join(await makeDataDir(), 'stream.tar.gz');
      const made = await runCli(['backup', file, '--data-dir', dir]);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).toContain('without secrets');
      const members: string[] = [];
      await tar.t({ file, onReadEntry: (e) => void members.push(e.path) });
      expect(members).toEqual(
        expect.arrayContaining([
          'manifest.json',
          'rules.json',
          'settings.json',
          'events.db',
          `overlays/${overlayId}.json`,
          'media/clips/ding.wav',
        ]),
      );
      expect(members).not.toContain('admin.key');
      // The daemon went on while it was backed up; the copy holds the 30 events.
      await api(daemon, 'POST', '/api/events', chat('after the backup'));
    } finally {
      await daemon.close();
    }

    // Things change; then the backup comes back.
    await writeFile(join(dir, 'rules.json'), '[]\n');
    const running = await runCli(['restore', file, '--data-dir', dir]);
    expect(running.code, running.stderr).toBe(0);
    expect(running.stdout).toContain('backups');
    const rules = JSON.parse(await readFile(join(dir, 'rules.json'), 'utf8')) as { id: string }[];
    expect(rules.map((r) => r.id)).toEqual(['kept']);
    // The password was not in the backup: the one in place stayed.
    expect(JSON.parse(await readFile(join(dir, 'settings.json'), 'utf8')).obs.password).toBe('obs-secret');
    const [kept] = await readdir(join(dir, 'backups'));
    expect(JSON.parse(await readFile(join(dir, 'backups', kept ?? '', 'rules.json'), 'utf8'))).toEqual([]);
    expect(await readdir(dir)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^\.restore-/)]));

    const again = await startTestDaemon({ dataDir: dir });
    try {
      const page = (await (await api(again, 'GET', '/api/events?limit=500')).json()) as {
        events: { event: { data: { comment: string } } }[];
      };
      const comments = page.events.map((e) => e.event.data.comment);
      expect(comments).toHaveLength(30);
      expect(comments).not.toContain('after the backup');
      expect((await api(again, 'GET', '/assets/clips/ding.wav')).status).toBe(200);
    } finally {
      await again.close();
    }
  }, 60_000);

  it('includes the secrets only when asked, and refuses to restore under a running daemon', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      const file = join(await makeDataDir(), 'with-secrets.tar.gz');
      const made = await runCli(['backup', file, '--data-dir', dir, '--include-secrets']);
      expect(made.code, made.stderr).toBe(0);
      const members: string[] = [];
      await tar.t({ file, onReadEntry: (e) => void members.push(e.path) });
      expect(members).toContain('admin.key');
      expect((await stat(file)).mode & 0o077).toBe(0);
      const before = await snapshot(dir);
      const refused = await runCli(['restore', file, '--data-dir', dir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('stop it first');
      expect(await snapshot(dir)).toEqual(before);
    } finally {
      await daemon.close();
    }
  }, 30_000);
});

describe('export and import through the control API', () => {
  it('downloads a backup of the running daemon, and puts an import in place at the next start', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    let archive: Buffer;
    try {
      for (let i = 0; i < 5; i++) await api(daemon, 'POST', '/api/events', chat(`exported ${i}`));
      const res = await api(daemon, 'GET', '/api/backup');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/gzip');
      expect(res.headers.get('content-disposition')).toMatch(
        /^attachment; filename="overlay-daemon-backup-.*\.tar\.gz"$/,
      );
      archive = Buffer.from(await res.arrayBuffer());

      // A hostile one is refused at once, naming why; nothing waits for the restart.
      const hostile = await fetch(`${daemon.url}/api/restore`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/gzip' },
        body: new Uint8Array(
          rawArchive([
            { path: 'manifest.json', body: MANIFEST },
            { path: '../x.json', body: '{}' },
          ]),
        ),
      });
      expect(hostile.status).toBe(400);
      expect(((await hostile.json()) as { error: { message: string } }).error.message).toMatch(
        /^backup: .*outside the backup/,
      );
      expect((await readdir(dir)).includes('restore-pending.tar.gz')).toBe(false);

      await api(daemon, 'PUT', '/api/rules', []);
      for (let i = 0; i < 3; i++) await api(daemon, 'POST', '/api/events', chat(`later ${i}`));
      const imported = await fetch(`${daemon.url}/api/restore`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/gzip' },
        body: new Uint8Array(archive),
      });
      expect(imported.status).toBe(202);
      expect(await imported.json()).toMatchObject({ restartNeeded: true });
    } finally {
      await daemon.close();
    }
    const again = await startTestDaemon({ dataDir: dir });
    try {
      expect(again.logs.some((l) => l.startsWith('[backup] restored the backup of'))).toBe(true);
      const page = (await (await api(again, 'GET', '/api/events')).json()) as {
        events: { event: { data: { comment: string } } }[];
      };
      expect(page.events.map((e) => e.event.data.comment)).toEqual(
        [0, 1, 2, 3, 4].map((i) => `exported ${i}`),
      );
      expect((await readdir(dir)).includes('restore-pending.tar.gz')).toBe(false);
    } finally {
      await again.close();
    }
  }, 30_000);
});

describe('a hostile or broken archive', () => {
  const cases: [string, Buffer, RegExp][] = [
    [
      'an absolute path',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: '/tmp/owned.json', body: '{}' },
      ]),
      /outside the backup/,
    ],
    [
      'a path with ..',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'media/../../escape.json', body: '{}' },
      ]),
      /outside the backup/,
    ],
    [
      'a symbolic link',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'media/ding.wav', type: 'SymbolicLink', linkpath: '/etc/passwd' },
      ]),
      /SymbolicLink, not a file/,
    ],
    [
      'a hard link',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'rules.json', type: 'Link', linkpath: 'manifest.json' },
      ]),
      /Link, not a file/,
    ],
    [
      'a 10 GB member',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'events.db', size: 10 * 1024 ** 3 },
      ]),
      /events\.db" is 10737418240 bytes, more than/,
    ],
    [
      'a file with no place in a backup',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'bin/evil.sh', body: 'rm -rf ~' },
      ]),
      /no place in a backup/,
    ],
    [
      'rules the daemon would refuse',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'rules.json', body: '[{"id": 7}]' },
      ]),
      /^.*rules\.json: /m,
    ],
    ['no manifest', rawArchive([{ path: 'rules.json', body: '[]' }]), /no manifest\.json/],
    ['not an archive at all', Buffer.from('just some text, not gzip'), /not a readable \.tar\.gz/],
  ];

  it.each(cases)(
    'with %s changes nothing and says why',
    async (_what, archive, why) => {
      const dir = await makeDataDir();
      const daemon = await startTestDaemon({ dataDir: dir });
      await daemon.close();
      const file = join(await makeDataDir(), 'hostile.tar.gz');
      await writeFile(file, archive);
      const before = await snapshot(dir);
      const result = await runCli(['restore', file, '--data-dir', dir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('was not restored, nothing changed');
      expect(result.stderr).toMatch(why);
      expect(await snapshot(dir)).toEqual(before);
      expect((await readdir(dir)).some((f) => f.startsWith('.restore-') || f === 'backups')).toBe(false);
    },
    30_000,
  );
});
