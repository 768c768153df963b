// `overlay-daemon backup` and `restore` as a streamer runs them: a backup of a running
// daemon, a restore that keeps the previous state, and hostile or broken archives that change nothing.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackup, restoreBackup } from '../../daemon/src/backup/backup.js';
import { dataDirPaths } from '../../daemon/src/store/data-dir.js';
import { killCliProcesses, runCli } from '../support/cli.js';
import { api, makeDataDir, startTestDaemon, waitFor } from '../support/daemon.js';
import { folderZip, GIFT_BOARD, zeros } from '../support/widget-zips.js';

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

/**
 * The data directory as a refused restore must leave it, while its daemon runs: the journal's own files
 * are left out, since the running daemon checkpoints them on its own timer.
 */
async function filesBesideJournal(dir: string): Promise<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(await snapshot(dir)).filter(([name]) => !name.startsWith('events.db')),
  );
}

/** A tar.gz written block by block, so a test can put in it what tar's own writer never would. */
function rawArchive(
  members: {
    path: string;
    type?: string;
    body?: string | Buffer;
    size?: number;
    linkpath?: string;
    mode?: number;
  }[],
): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const body = Buffer.from(m.body ?? '');
    const header = new tar.Header({
      path: m.path,
      type: (m.type ?? 'File') as 'File',
      size: m.size ?? body.length,
      mode: m.mode ?? (m.type === 'Directory' ? 0o755 : 0o644),
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
const WITH_SECRETS = JSON.stringify({
  format: 1,
  createdAt: '2026-11-01T00:00:00.000Z',
  includesSecrets: true,
});

/** An events.db as the journal writes it, but whose sequence says `seq_reserved` = "NaN". */
function craftedJournal(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'crafted-'));
  try {
    const db = new Database(join(dir, 'events.db'));
    db.exec(`CREATE TABLE events (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, event TEXT NOT NULL);
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO events VALUES (1, 0, '{}');
      INSERT INTO meta VALUES ('seq_reserved', 'NaN');`);
    db.close();
    return readFileSync(join(dir, 'events.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Restores `archive` with the CLI into a fresh data directory holding `settings`; answers the run and the dir. */
async function restoreInto(archive: Buffer, settings?: unknown) {
  const dir = await makeDataDir();
  const daemon = await startTestDaemon({ dataDir: dir });
  await daemon.close();
  if (settings) await writeFile(join(dir, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
  const file = join(await makeDataDir(), 'in.tar.gz');
  await writeFile(file, archive);
  return { dir, result: await runCli(['restore', file, '--data-dir', dir]) };
}

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
      // The Twitch sign-in is a secret like the others: in the backup with --include-secrets only.
      await writeFile(join(dir, 'twitch.json'), '{"signed":"in"}\n', { mode: 0o600 });
      const file = join(await makeDataDir(), 'with-secrets.tar.gz');
      const made = await runCli(['backup', file, '--data-dir', dir, '--include-secrets']);
      expect(made.code, made.stderr).toBe(0);
      const members: string[] = [];
      await tar.t({ file, onReadEntry: (e) => void members.push(e.path) });
      expect(members).toContain('admin.key');
      expect(members).toContain('twitch.json');
      const without = join(await makeDataDir(), 'without.tar.gz');
      expect((await runCli(['backup', without, '--data-dir', dir])).code).toBe(0);
      const plain: string[] = [];
      await tar.t({ file: without, onReadEntry: (e) => void plain.push(e.path) });
      expect(plain).not.toContain('twitch.json');
      expect(plain).not.toContain('admin.key');
      expect((await stat(file)).mode & 0o077).toBe(0);
      const before = await filesBesideJournal(dir);
      const refused = await runCli(['restore', file, '--data-dir', dir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('stop it first');
      expect(await filesBesideJournal(dir)).toEqual(before);
    } finally {
      await daemon.close();
    }
  }, 30_000);
});

describe('live widget values', () => {
  it("a backup carries the goal as the stream left it, and a restore puts it back; one without them takes its overlay files' values", async () => {
    const dir = await makeDataDir();
    const out = await makeDataDir();
    const likes = async (count: number) => {
      const daemon = await startTestDaemon({ dataDir: dir });
      try {
        const overlay = daemon.overlays.list()[0]!;
        const goalOf = () => {
          const goal = daemon.overlays.get(overlay.id)?.widgets.find((w) => w.type === 'goal');
          return goal?.type === 'goal' ? goal.current : undefined;
        };
        const before = goalOf() ?? 0;
        for (let i = 0; i < count; i++)
          daemon.ingest({
            type: 'like',
            platform: 'api',
            user: { uniqueId: 'u', nickname: 'U' },
            data: { likeCount: 1 },
          });
        await waitFor(() => goalOf() === before + count);
        return { before, after: goalOf() };
      } finally {
        await daemon.close();
      }
    };
    try {
      // The demo overlay has a goal of likes.
      expect(await likes(12)).toEqual({ before: 0, after: 12 });
      const dirs = dataDirPaths(dir);
      const file = join(out, 'live.tar.gz');
      await createBackup(dirs, file, { includeSecrets: false });
      const members: string[] = [];
      await tar.t({ file, onReadEntry: (e) => void members.push(e.path) });
      expect(members).toContain('live-values.json');
      expect(await likes(5)).toEqual({ before: 12, after: 17 });
      await restoreBackup(dirs, file);
      expect((await likes(0)).before).toBe(12);

      // A backup from before live-values.json existed: the values its overlay files hold (the demo's 0).
      await rm(dirs.liveValuesFile);
      const old = join(out, 'old.tar.gz');
      await createBackup(dirs, old, { includeSecrets: false });
      expect(await likes(3)).toEqual({ before: 0, after: 3 });
      await restoreBackup(dirs, old);
      expect((await likes(0)).before).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(out, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('widget packages', () => {
  it('a backup carries each package and its media without secret values, and a restore keeps the stored ones', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    let id: string;
    try {
      const res = await fetch(`${daemon.url}/api/widgets/import`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/zip' },
        body: new Uint8Array(
          folderZip('board/', {
            'board/data.json': JSON.stringify(GIFT_BOARD.data),
            'board/rose.png': zeros(8),
          }),
        ),
      });
      expect(res.status).toBe(201);
      ({ id } = (await res.json()) as { id: string });
    } finally {
      await daemon.close();
    }
    const file = join(await makeDataDir(), 'widgets.tar.gz');
    expect((await runCli(['backup', file, '--data-dir', dir])).code).toBe(0);
    const archived: Record<string, string> = {};
    await tar.t({
      file,
      onReadEntry: (e) => {
        let text = '';
        e.on('data', (c: Buffer) => {
          text += c.toString();
        });
        e.on('end', () => {
          archived[e.path] = text;
        });
      },
    });
    expect(Object.keys(archived)).toEqual(
      expect.arrayContaining([
        `widgets/${id}/manifest.json`,
        `widgets/${id}/widget.js`,
        `media/widgets/${id}/rose.png`,
      ]),
    );
    expect(archived[`widgets/${id}/data.json`]).not.toContain('sk-typed-by-the-streamer');

    // Into a fresh data directory: the package and its image, with no secret value.
    const { dir: other, result } = await restoreInto(await readFile(file));
    expect(result.code, result.stderr).toBe(0);
    const data = JSON.parse(await readFile(join(other, 'widgets', id, 'data.json'), 'utf8'));
    expect(data.title).toBe('Roses and lions');
    expect(data).not.toHaveProperty('apiKey');
    expect((await stat(join(other, 'media', 'widgets', id, 'rose.png'))).size).toBe(8);
    // Over the data directory it came from: the stored secret stays.
    const back = await runCli(['restore', file, '--data-dir', dir]);
    expect(back.code, back.stderr).toBe(0);
    const kept = JSON.parse(await readFile(join(dir, 'widgets', id, 'data.json'), 'utf8'));
    expect(kept.apiKey).toBe('sk-typed-by-the-streamer');
  }, 60_000);
});

describe('restore and the data directory lock', () => {
  it('refuses to restore under a running daemon whose daemon.json is gone, naming the process', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      const file = join(await makeDataDir(), 'backup.tar.gz');
      expect((await runCli(['backup', file, '--data-dir', dir])).code).toBe(0);
      // Only the lock still says a daemon runs here.
      await rm(join(dir, 'daemon.json'), { force: true });
      const before = await filesBesideJournal(dir);
      const refused = await runCli(['restore', file, '--data-dir', dir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`process ${process.pid}`);
      expect(refused.stderr).toContain('nothing was restored');
      expect(await filesBesideJournal(dir)).toEqual(before);
      expect(await readdir(dir)).not.toContain('backups');
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
        /^attachment; filename="overlay-daemon-backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.tar\.gz"$/,
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

describe('secrets and modes', () => {
  it('a backup without secrets carries no secret of the settings, and a restore keeps the stored ones', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      await api(daemon, 'PUT', '/api/settings', {
        obs: { url: 'ws://127.0.0.1:4455', password: 'obs-secret' },
        youtube: { apiKey: 'AIzaSyKey_123' },
        tts: { maxChars: 77 },
      });
    } finally {
      await daemon.close();
    }
    const file = join(await makeDataDir(), 'plain.tar.gz');
    expect((await runCli(['backup', file, '--data-dir', dir])).code).toBe(0);
    let settings = '';
    await tar.t({
      file,
      onReadEntry: (e) => {
        if (e.path !== 'settings.json') return void e.resume();
        e.on('data', (c: Buffer) => {
          settings += c.toString();
        });
      },
    });
    expect(JSON.parse(settings).tts.maxChars).toBe(77);
    expect(settings).not.toContain('obs-secret');
    expect(settings).not.toContain('AIzaSyKey_123');

    // Restored over settings that hold other secrets: those stay.
    const { dir: other, result } = await restoreInto(await readFile(file), {
      obs: { password: 'kept-password' },
      youtube: { apiKey: 'KeptKey_456' },
    });
    expect(result.code, result.stderr).toBe(0);
    const restored = JSON.parse(await readFile(join(other, 'settings.json'), 'utf8'));
    expect(restored.tts.maxChars).toBe(77);
    expect(restored.obs.password).toBe('kept-password');
    expect(restored.youtube.apiKey).toBe('KeptKey_456');
  }, 60_000);

  it('every restored file is 0600 and every folder 0700, whatever the archive says', async () => {
    const archive = rawArchive([
      { path: 'manifest.json', body: WITH_SECRETS, mode: 0o666 },
      { path: 'settings.json', body: '{"obs":{"password":"in-the-archive"}}', mode: 0o666 },
      { path: 'admin.key', body: 'k'.repeat(43), mode: 0o4777 },
      { path: 'media/', type: 'Directory', mode: 0o777 },
      { path: 'media/clips/', type: 'Directory', mode: 0o777 },
      { path: 'media/clips/ding.wav', body: 'RIFF', mode: 0o666 },
    ]);
    const { dir, result } = await restoreInto(archive);
    expect(result.code, result.stderr).toBe(0);
    for (const name of ['settings.json', 'admin.key', 'media/clips/ding.wav'])
      expect({ name, mode: (await stat(join(dir, name))).mode & 0o7777 }).toEqual({ name, mode: 0o600 });
    for (const name of ['media', 'media/clips', 'overlays'])
      expect({ name, mode: (await stat(join(dir, name))).mode & 0o7777 }).toEqual({ name, mode: 0o700 });
  }, 30_000);

  it("without a file name, writes into the data directory's backups/, named by date and time", async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    await daemon.close();
    const here = (await readdir(process.cwd())).filter((f) => f.endsWith('.tar.gz'));
    const made = await runCli(['backup', '--data-dir', dir]);
    expect(made.code, made.stderr).toBe(0);
    const written = await readdir(join(dir, 'backups'));
    expect(written).toEqual([
      expect.stringMatching(/^overlay-daemon-backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.tar\.gz$/),
    ]);
    expect(made.stdout).toContain(join(dir, 'backups', written[0] ?? ''));
    // Nothing lands in the folder the command ran in (a checkout of the project, here).
    expect((await readdir(process.cwd())).filter((f) => f.endsWith('.tar.gz'))).toEqual(here);
  }, 30_000);
});

describe('a pending import', () => {
  const upload = (daemon: Awaited<ReturnType<typeof startTestDaemon>>, body: Buffer) =>
    fetch(`${daemon.url}/api/restore`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${daemon.adminKey}`, 'Content-Type': 'application/gzip' },
      body: new Uint8Array(body),
    });

  it('is shown until the next start and can be cancelled; bad uploads are refused in words', async () => {
    const dir = await makeDataDir();
    const daemon = await startTestDaemon({ dataDir: dir });
    try {
      expect(await (await api(daemon, 'GET', '/api/restore')).json()).toEqual({ pending: false });
      // A file followed by a folder of its name: a clear 400, not a 500.
      const clash = await upload(
        daemon,
        rawArchive([
          { path: 'manifest.json', body: MANIFEST },
          { path: 'media/a.png', body: 'png' },
          { path: 'media/a.png/', type: 'Directory' },
        ]),
      );
      expect(clash.status).toBe(400);
      expect(((await clash.json()) as { error: { message: string } }).error.message).toMatch(
        /both a file and a folder/,
      );
      // A small upload that would expand to ~940 MB: 413, said in words, checked from its headers.
      const bomb = await upload(
        daemon,
        rawArchive([
          { path: 'manifest.json', body: MANIFEST },
          { path: 'events.db', size: 940 * 1024 ** 2 },
        ]),
      );
      expect(bomb.status).toBe(413);
      expect(((await bomb.json()) as { error: { message: string } }).error.message).toMatch(
        /^backup: the archive expands to more than/,
      );
      expect(await (await api(daemon, 'GET', '/api/restore')).json()).toEqual({ pending: false });

      await api(daemon, 'PUT', '/api/rules', []);
      const archive = Buffer.from(await (await api(daemon, 'GET', '/api/backup')).arrayBuffer());
      expect((await upload(daemon, archive)).status).toBe(202);
      expect(await (await api(daemon, 'GET', '/api/restore')).json()).toEqual({
        pending: true,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        includesSecrets: false,
      });
      expect((await api(daemon, 'DELETE', '/api/restore')).status).toBe(204);
      expect(await (await api(daemon, 'GET', '/api/restore')).json()).toEqual({ pending: false });
      expect((await api(daemon, 'DELETE', '/api/restore')).status).toBe(404);
    } finally {
      await daemon.close();
    }
    // Cancelled: nothing is put in place at the next start.
    const again = await startTestDaemon({ dataDir: dir });
    try {
      expect(again.logs.some((l) => l.startsWith('[backup] restored'))).toBe(false);
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
    [
      'terminal escapes in a member name',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'bin/\u001b[2J\u001b]0;owned\u0007', body: 'x' },
      ]),
      /the member "bin\/\\x1b\[2J\\x1b\]0;owned\\x07" has no place in a backup/,
    ],
    [
      'a file and then a folder of the same name',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'media/clip.png', body: 'png' },
        { path: 'media/clip.png/', type: 'Directory' },
      ]),
      /"media\/clip\.png" is both a file and a folder/,
    ],
    [
      'members that expand to far more than the archive',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'events.db', size: 940 * 1024 ** 2 },
      ]),
      /expands to more than \d+ bytes/,
    ],
    [
      'more members than a backup holds',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        ...Array.from({ length: 20_001 }, () => ({ path: 'media/', type: 'Directory' })),
      ]),
      /more than 20000 members/,
    ],
    [
      'terminal escapes in the manifest date',
      rawArchive([
        {
          path: 'manifest.json',
          body: JSON.stringify({
            format: 1,
            createdAt: '\u001b[2J\u001b]0;owned\u0007',
            includesSecrets: false,
          }),
        },
      ]),
      /manifest\.json: .*date and time/,
    ],
    [
      'an empty admin.key',
      rawArchive([
        { path: 'manifest.json', body: WITH_SECRETS },
        { path: 'admin.key', body: '\n' },
      ]),
      /admin\.key: it holds no usable key/,
    ],
    [
      'an admin.key although the manifest says no secrets',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'admin.key', body: 'k'.repeat(43) },
      ]),
      /admin\.key: the manifest says the backup holds no secrets/,
    ],
    [
      'a journal whose sequence is not a whole number',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'events.db', body: craftedJournal() },
      ]),
      /events\.db: its sequence is not a whole number/,
    ],
    [
      'a widget package missing its files',
      rawArchive([
        { path: 'manifest.json', body: MANIFEST },
        { path: 'widgets/6b1f8c2e-4d3a-4f5b-9c6d-7e8f9a0b1c2d/widget.html', body: '<p>half</p>' },
      ]),
      /widgets\/6b1f8c2e-4d3a-4f5b-9c6d-7e8f9a0b1c2d: not a whole, readable widget package/,
    ],
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
      // Nothing of the archive reaches the terminal as a control sequence.
      expect(result.stderr).not.toContain('\u001b');
      expect(await snapshot(dir)).toEqual(before);
      expect((await readdir(dir)).some((f) => f.startsWith('.restore-') || f === 'backups')).toBe(false);
    },
    30_000,
  );
});
