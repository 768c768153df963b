#!/usr/bin/env node
// Adds the platform-specific optional packages (other OSes and CPUs) that a registry mirror without
// them leaves out of package-lock.json, so that `npm ci` accepts the lockfile on every machine.
// Each entry carries os/cpu/libc so npm skips it where it does not apply. Run after `npm install`.
import { readFileSync, writeFileSync } from 'node:fs';

const OSES = ['android', 'darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'openharmony', 'sunos', 'aix'];
const CPUS = ['arm64', 'x64', 'arm', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'];

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[`${path}/${key}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((p) => OSES.includes(p));
    const cpu = parts.find((p) => CPUS.includes(p));
    if (!os || !cpu) continue;
    lock.packages[key] = {
      version: range.replace(/^[\^~=]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(parts.includes('musl') ? { libc: ['musl'] } : parts.includes('gnu') ? { libc: ['glibc'] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
