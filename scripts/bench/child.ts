// Starts a server under test in its own Node process (daemon and baselines alike) and talks to it over IPC.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';
import { ChildMessage, type Command, type ReadyMessage } from './ipc.js';

export interface ServerChild {
  pid: number;
  ready: ReadyMessage;
  /**
   * Full GC in the child (it runs with --expose-gc); resolves to the V8 heap then in use and the young
   * generation's committed size (bytes).
   */
  gc(): Promise<HeapAfterGc>;
  stop(): Promise<void>;
}

interface ChildOptions {
  /** Arguments handed to the script (after `--`). */
  args?: string[];
  /** Written into the child's CPU profile directory when set (node --cpu-prof). */
  cpuProfileDir?: string;
  startTimeoutMs?: number;
}

const STOP_TIMEOUT_MS = 10_000;

export interface HeapAfterGc {
  heapUsed: number;
  young: number;
}

/** Runs `scripts/bench/servers/<name>.ts` through tsx with --expose-gc; resolves when it reports `ready`. */
export async function startServerChild(name: string, options: ChildOptions = {}): Promise<ServerChild> {
  const script = fileURLToPath(new URL(`./servers/${name}.ts`, import.meta.url));
  const nodeArgs = ['--import', 'tsx', '--expose-gc'];
  if (options.cpuProfileDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`);
  const child = spawn(process.execPath, [...nodeArgs, script, ...(options.args ?? [])], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${name}`);
  const waiting = new Map<number, (heap: HeapAfterGc) => void>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in time`)),
      options.startTimeoutMs ?? 30_000,
    );
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
    child.on('message', (raw) => {
      const parsed = v.safeParse(ChildMessage, raw);
      if (!parsed.success) return;
      const message = parsed.output;
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message);
      } else {
        waiting.get(message.id)?.({ heapUsed: message.heapUsed ?? 0, young: message.young ?? 0 });
        waiting.delete(message.id);
      }
    });
  });

  const send = (command: Command['command']) =>
    new Promise<HeapAfterGc>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, resolve);
      sendTo(child, { id, command }, reject);
    });

  let stopping: Promise<void> | undefined;
  return {
    pid,
    ready,
    gc: () => send('gc'),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null) return;
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await Promise.race([send('stop').catch(() => 0), exited]);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

function sendTo(child: ChildProcess, command: Command, reject: (err: Error) => void): void {
  if (!child.connected) {
    reject(new Error('child is gone'));
    return;
  }
  child.send(command, (err) => {
    if (err) reject(err);
  });
}
