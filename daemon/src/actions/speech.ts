// Text to speech with the operating system's own voices: espeak-ng on Linux, `say` on
// macOS, SAPI through PowerShell on Windows. Each text is made plain (speech-text.ts), rendered once to
// a WAV file in a cache named by its SHA-256, served at /tts/<hash>.wav and kept for an hour after its
// last use. Everything chat can make it keep is bounded: the cache's files and bytes (least recently
// used out), the renders waiting for the engine (past the bound a text is dropped), and nothing is
// rendered while the disk is nearly full.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, statfs, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable } from '../find-executable.js';
import { blockedWord, speechText } from './speech-text.js';

/** A voice the engine offers: `id` is what a `speak` action's `voice` names. */
export interface Voice {
  id: string;
  name: string;
  language: string;
}

interface RenderOptions {
  voice?: string | undefined;
  /** 0.5–2, 1 the engine's usual pace. */
  rate?: number | undefined;
}

/** One speech engine of the operating system. */
interface SpeechEngine {
  readonly name: string;
  /** argv and stdin of the process that writes `out`, a WAV file. */
  command(text: string, options: RenderOptions, out: string): { file: string; args: string[]; stdin: string };
  /** The process that lists the voices, and how to read its output. */
  voicesCommand(): { file: string; args: string[] };
  parseVoices(output: string): Voice[];
}

/** Words per minute at rate 1: espeak-ng's and `say`'s usual pace. */
const WPM = 175;

/** espeak-ng reads the text on stdin (`--stdin`), so no text is ever taken for an option. */
const espeakNg = (file: string): SpeechEngine => ({
  name: 'espeak-ng',
  command: (text, { voice, rate }, out) => ({
    file,
    args: [
      '-w',
      out,
      '-s',
      String(Math.round(WPM * (rate ?? 1))),
      ...(voice ? ['-v', voice] : []),
      '--stdin',
    ],
    stdin: text,
  }),
  voicesCommand: () => ({ file, args: ['--voices'] }),
  // "Pty Language Age/Gender VoiceName File Other Languages", one voice per line after the header.
  parseVoices: (output) =>
    output
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols.length >= 5 && cols[1])
      .map((cols) => ({
        id: cols[1] as string,
        name: (cols[3] ?? '').replace(/_/g, ' '),
        language: cols[1] as string,
      })),
});

/** macOS: `say` reads the text from stdin (`-f -`) and writes 16-bit WAV. */
const macSay = (file: string): SpeechEngine => ({
  name: 'say',
  command: (text, { voice, rate }, out) => ({
    file,
    args: [
      '-o',
      out,
      '--file-format=WAVE',
      '--data-format=LEI16@22050',
      '-r',
      String(Math.round(WPM * (rate ?? 1))),
      ...(voice ? ['-v', voice] : []),
      '-f',
      '-',
    ],
    stdin: text,
  }),
  voicesCommand: () => ({ file, args: ['-v', '?'] }),
  // "Alex                en_US    # Most people recognize me by my voice."
  parseVoices: (output) =>
    output.split('\n').flatMap((line) => {
      const match = /^(.+?)\s{2,}([A-Za-z]{2,3}[_-][A-Za-z0-9]+)\s+#/.exec(line);
      return match?.[1] && match[2] ? [{ id: match[1], name: match[1], language: match[2] }] : [];
    }),
});

/**
 * Windows: System.Speech through PowerShell. The text comes on stdin, the voice and the output path
 * in environment variables, so nothing the viewer wrote ever becomes part of the script.
 */
const SAPI_SPEAK = [
  'Add-Type -AssemblyName System.Speech',
  '$s = New-Object System.Speech.Synthesis.SpeechSynthesizer',
  'if ($env:TTS_VOICE) { $s.SelectVoice($env:TTS_VOICE) }',
  '$s.Rate = [int]$env:TTS_RATE',
  '$s.SetOutputToWaveFile($env:TTS_OUT)',
  '$s.Speak([Console]::In.ReadToEnd())',
  '$s.Dispose()',
].join('; ');
const SAPI_VOICES = [
  'Add-Type -AssemblyName System.Speech',
  '(New-Object System.Speech.Synthesis.SpeechSynthesizer).GetInstalledVoices() | ForEach-Object { $_.VoiceInfo.Name + "|" + $_.VoiceInfo.Culture.Name }',
].join('; ');
const sapi = (
  file: string,
): SpeechEngine & { env(options: RenderOptions, out: string): NodeJS.ProcessEnv } => ({
  name: 'sapi',
  command: (text) => ({ file, args: ['-NoProfile', '-NonInteractive', '-Command', SAPI_SPEAK], stdin: text }),
  // SAPI's rate runs from -10 to 10, about a third to three times the usual pace.
  env: ({ voice, rate }, out) => ({
    TTS_VOICE: voice ?? '',
    TTS_RATE: String(Math.max(-10, Math.min(10, Math.round((10 * Math.log(rate ?? 1)) / Math.log(3))))),
    TTS_OUT: out,
  }),
  voicesCommand: () => ({ file, args: ['-NoProfile', '-NonInteractive', '-Command', SAPI_VOICES] }),
  parseVoices: (output) =>
    output.split(/\r?\n/).flatMap((line) => {
      const [name, language] = line.trim().split('|');
      return name ? [{ id: name, name, language: language ?? '' }] : [];
    }),
});

/** The engine of this operating system, if it is installed. */
async function findEngine(
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
): Promise<SpeechEngine | undefined> {
  if (platform === 'darwin') {
    const say = await findExecutable('say', env, platform);
    return say ? macSay(say) : undefined;
  }
  if (platform === 'win32') {
    const ps = await findExecutable('powershell', env, platform);
    return ps ? sapi(ps) : undefined;
  }
  const espeak = (await findExecutable('espeak-ng', env, platform)) ?? undefined;
  return espeak ? espeakNg(espeak) : undefined;
}

/** What to install when no engine is found, in the streamer's words. */
function missingEngineMessage(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'speech needs macOS\'s "say" command, which was not found';
  if (platform === 'win32') return 'speech needs Windows PowerShell, which was not found';
  return 'speech needs espeak-ng: install it (e.g. "sudo apt install espeak-ng") and try again';
}

export const TTS_FILE = /^([0-9a-f]{64})\.wav$/;
/** A rendered file is kept this long after its last use. */
const KEEP_MS = 60 * 60 * 1000;
const RENDER_TIMEOUT_MS = 15_000;
/** At most this many engine processes at once; the others wait their turn. */
const MAX_RENDERS = 2;
/** The cache's bounds: past either, the least recently used files go. */
export const MAX_CACHE_BYTES = 200 * 1024 * 1024;
export const MAX_CACHE_FILES = 2000;
/** Renders waiting for an engine process at most; a text past them is dropped (and logged). */
export const MAX_WAITING_RENDERS = 20;
/** Nothing is rendered with less free space than this on the cache's disk (or 5 % of a small disk). */
export const MIN_FREE_BYTES = 512 * 1024 * 1024;
const MIN_FREE_SHARE = 0.05;

/** Free and total bytes of the disk that holds a folder. */
export interface DiskSpace {
  free: number;
  size: number;
}

interface SpeechOptions {
  /** The cache folder (`<data dir>/tts`). */
  dir: string;
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** The streamer's blocked words: a text that holds one once it is plain is not rendered. */
  blockedWords?: () => readonly string[];
  /** Bounds of the cache (MAX_CACHE_BYTES, MAX_CACHE_FILES) and of the backlog (MAX_WAITING_RENDERS). */
  maxCacheBytes?: number;
  maxCacheFiles?: number;
  maxWaiting?: number;
  /** Free bytes below which nothing is rendered (default: MIN_FREE_BYTES, or 5 % of a disk under 10 GiB). */
  minFreeBytes?: number;
  /** The free space of the disk holding `dir` (statfs by default; tests put in a nearly full disk). */
  diskSpace?: (dir: string) => Promise<DiskSpace>;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${Math.floor(bytes / MIB)} MiB`;

async function statfsSpace(dir: string): Promise<DiskSpace> {
  const info = await statfs(dir);
  return { free: info.bavail * info.bsize, size: info.blocks * info.bsize };
}

export class Speech {
  readonly #options: SpeechOptions;
  #engine: Promise<SpeechEngine | undefined> | undefined;
  readonly #rendering = new Map<string, Promise<string>>();
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #voices: Promise<Voice[]> | undefined;
  /** The cached files, least recently used first, and their sizes: read from the folder once. */
  #cache: Promise<Map<string, number>> | undefined;
  #cacheBytes = 0;

  constructor(options: SpeechOptions) {
    this.#options = options;
  }

  #platform(): NodeJS.Platform {
    return this.#options.platform ?? process.platform;
  }

  /** The engine, looked up once (speech is rare next to events). */
  engine(): Promise<SpeechEngine | undefined> {
    this.#engine ??= findEngine(this.#platform(), this.#options.env ?? process.env);
    return this.#engine;
  }

  /** Where a rendered file lives, for a name that matched TTS_FILE. */
  path(fileName: string): string {
    return join(this.#options.dir, fileName);
  }

  /**
   * Renders `text` (or finds it in the cache) and resolves with its hash: the file is
   * `/tts/<hash>.wav`. The same text, voice and rate give the same file.
   */
  async render(text: string, options: RenderOptions = {}): Promise<string> {
    // Plain before anything else: the blocked words are looked for in what the engine will read.
    const plain = speechText(text);
    if (!plain)
      throw new Error('nothing to say: the text is empty once markup and control characters are removed');
    const blocked = blockedWord(plain, this.#options.blockedWords?.() ?? []);
    if (blocked !== undefined) throw new Error(`dropped: the text has the blocked word "${blocked}"`);
    const engine = await this.engine();
    if (!engine) throw new Error(missingEngineMessage(this.#platform()));
    const hash = createHash('sha256')
      .update(JSON.stringify([engine.name, options.voice ?? '', options.rate ?? 1, plain]))
      .digest('hex');
    const pending = this.#rendering.get(hash);
    if (pending) return pending;
    const job = this.#renderOnce(engine, hash, plain, options).finally(() => this.#rendering.delete(hash));
    this.#rendering.set(hash, job);
    return job;
  }

  async #renderOnce(
    engine: SpeechEngine,
    hash: string,
    text: string,
    options: RenderOptions,
  ): Promise<string> {
    const name = `${hash}.wav`;
    const file = this.path(name);
    const now = new Date(this.#now());
    // A file rendered before is used again, and kept for another hour from now.
    if (
      await utimes(file, now, now).then(
        () => true,
        () => false,
      )
    ) {
      await this.#used(name);
      return hash;
    }
    await mkdir(this.#options.dir, { recursive: true, mode: 0o700 });
    await this.#checkDisk();
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await this.#slot();
    try {
      await runEngine(engine, text, options, temp);
      await checkWave(temp);
      const { size } = await stat(temp);
      await rename(temp, file);
      await this.#added(name, size);
      return hash;
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    } finally {
      this.#release();
    }
  }

  /** The engine's voices (asked once; an engine that is missing has none). */
  voices(): Promise<Voice[]> {
    this.#voices ??= this.engine().then(async (engine) => {
      if (!engine) return [];
      const { file, args } = engine.voicesCommand();
      const output = await runProcess(file, args, '', {}).catch(() => '');
      return engine.parseVoices(output);
    });
    return this.#voices;
  }

  /** Removes files not used for an hour (and temporary files left by a crash). */
  async sweep(): Promise<void> {
    const names = await readdir(this.#options.dir).catch(() => [] as string[]);
    const oldest = this.#now() - KEEP_MS;
    const cache = this.#cache ? await this.#cache : undefined;
    for (const name of names) {
      const path = join(this.#options.dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < oldest) {
        await rm(path, { force: true });
        this.#forget(cache, name);
      }
    }
  }

  /** The cache's files, least recently used first (their modification time is their last use). */
  #files(): Promise<Map<string, number>> {
    this.#cache ??= (async () => {
      const names = (await readdir(this.#options.dir).catch(() => [] as string[])).filter((n) =>
        TTS_FILE.test(n),
      );
      const found: { name: string; size: number; used: number }[] = [];
      for (const name of names) {
        const info = await stat(this.path(name)).catch(() => undefined);
        if (info?.isFile()) found.push({ name, size: info.size, used: info.mtimeMs });
      }
      found.sort((a, b) => a.used - b.used);
      this.#cacheBytes = found.reduce((sum, f) => sum + f.size, 0);
      return new Map(found.map((f) => [f.name, f.size]));
    })();
    return this.#cache;
  }

  /** A cached file was used again: it is the most recently used. */
  async #used(name: string): Promise<void> {
    const cache = await this.#files();
    const size = cache.get(name);
    if (size === undefined) return;
    cache.delete(name);
    cache.set(name, size);
  }

  /** A new file is in the cache: the least recently used ones go until both bounds hold again. */
  async #added(name: string, size: number): Promise<void> {
    const cache = await this.#files();
    this.#forget(cache, name);
    cache.set(name, size);
    this.#cacheBytes += size;
    const maxFiles = this.#options.maxCacheFiles ?? MAX_CACHE_FILES;
    const maxBytes = this.#options.maxCacheBytes ?? MAX_CACHE_BYTES;
    for (const [oldest] of cache) {
      if (cache.size <= maxFiles && this.#cacheBytes <= maxBytes) break;
      // The file just made is kept, even alone past the bytes: it is about to be played.
      if (oldest === name) break;
      this.#forget(cache, oldest);
      await rm(this.path(oldest), { force: true });
    }
  }

  #forget(cache: Map<string, number> | undefined, name: string): void {
    const size = cache?.get(name);
    if (cache && size !== undefined) {
      cache.delete(name);
      this.#cacheBytes -= size;
    }
  }

  /** Refuses to render while the cache's disk is nearly full (a disk that cannot be asked is not). */
  async #checkDisk(): Promise<void> {
    const space = await (this.#options.diskSpace ?? statfsSpace)(this.#options.dir).catch(() => undefined);
    if (!space) return;
    const floor = this.#options.minFreeBytes ?? Math.min(MIN_FREE_BYTES, space.size * MIN_FREE_SHARE);
    if (space.free < floor)
      throw new Error(
        `skipped: the disk of ${this.#options.dir} is nearly full (${mib(space.free)} free; speech needs ${mib(floor)})`,
      );
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  async #slot(): Promise<void> {
    if (this.#running < MAX_RENDERS) {
      this.#running++;
      return;
    }
    const maxWaiting = this.#options.maxWaiting ?? MAX_WAITING_RENDERS;
    if (this.#waiting.length >= maxWaiting)
      throw new Error(`dropped: ${maxWaiting} texts are already waiting for the speech engine`);
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}

async function runEngine(
  engine: SpeechEngine,
  text: string,
  options: RenderOptions,
  out: string,
): Promise<void> {
  const { file, args, stdin } = engine.command(text, options, out);
  const env = 'env' in engine && typeof engine.env === 'function' ? engine.env(options, out) : {};
  await runProcess(file, args, stdin, env as NodeJS.ProcessEnv);
}

/** Runs a process to its end within the render timeout; resolves with its stdout. */
function runProcess(file: string, args: string[], stdin: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < 1_000_000) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 2000) stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RENDER_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else if (signal)
        reject(new Error(`the speech engine did not finish within ${RENDER_TIMEOUT_MS / 1000} s`));
      else
        reject(new Error(`the speech engine failed (exit ${code}): ${stderr.trim().split('\n')[0] ?? ''}`));
    });
    child.stdin.on('error', () => {}); // an engine that exits early closes its stdin
    child.stdin.end(stdin);
  });
}

/** What the engine wrote must be a WAV file: "RIFF", a size, "WAVE". */
async function checkWave(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(12);
    const { bytesRead } = await handle.read(head, 0, 12, 0);
    if (
      bytesRead < 12 ||
      head.toString('latin1', 0, 4) !== 'RIFF' ||
      head.toString('latin1', 8, 12) !== 'WAVE'
    )
      throw new Error('the speech engine did not write a WAV file');
  } finally {
    await handle.close();
  }
}
