// Describes the machine a run happened on (CPU model, cores, memory, Node version) for BENCHMARKS.md.
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  loadAverage: string;
}

function cpuModelFromProc(): string | undefined {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim();
  } catch {
    return undefined;
  }
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: cpuModelFromProc() ?? list[0]?.model ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage: loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
  };
}
