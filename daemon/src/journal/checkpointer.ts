// The WAL is folded into events.db by a connection of its own in a worker thread: a checkpoint writes and
// syncs the database file, and events arriving meanwhile would wait for it on the daemon's connection.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../errors.js';

export interface Checkpointer {
  /** Asks for a checkpoint; false when the worker is not running (the caller does it then). */
  run(): boolean;
  /** Closes the worker's connection and waits (at most 5 s) until it is closed. */
  close(): void;
}

/** The worker: its own connection to events.db, a passive checkpoint per message, closed on `close`. */
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const done = new Int32Array(workerData.done);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 2000');
parentPort.on('message', (message) => {
  if (message === 'checkpoint') {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      parentPort.postMessage(String((err && err.message) || err));
    }
    return;
  }
  try { db.close(); } finally {
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
    parentPort.close();
  }
});
`;

export function startCheckpointer(path: string, log: (line: string) => void): Checkpointer | undefined {
  let worker: Worker;
  const done = new SharedArrayBuffer(4);
  try {
    worker = new Worker(CHECKPOINTER_SOURCE, {
      eval: true,
      workerData: { path, module: createRequire(import.meta.url).resolve('better-sqlite3'), done },
    });
  } catch (err) {
    log(`[journal] checkpoints run between events: no worker thread (${errorMessage(err)})`);
    return undefined;
  }
  worker.unref();
  let running = true;
  worker.on('message', (message) => log(`[journal] checkpoint failed: ${String(message)}`));
  worker.on('error', (err) => {
    running = false;
    log(`[journal] checkpoints run between events: the worker stopped (${errorMessage(err)})`);
  });
  worker.on('exit', () => {
    running = false;
  });
  return {
    run() {
      if (running) worker.postMessage('checkpoint');
      return running;
    },
    close() {
      if (!running) return;
      running = false;
      worker.postMessage('close');
      Atomics.wait(new Int32Array(done), 0, 0, 5000);
    },
  };
}
