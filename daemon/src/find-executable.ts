// Resolves a command the way spawn would (a path, or a name searched on PATH), to fail early with a useful message.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

export async function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  const executable = async (path: string) =>
    access(path, platform === 'win32' ? constants.F_OK : constants.X_OK).then(
      () => true,
      () => false,
    );
  if (isAbsolute(command) || command.includes('/') || command.includes('\\')) {
    return (await executable(command)) ? command : undefined;
  }
  const extensions = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of extensions) {
      const candidate = join(dir, command + ext);
      if (await executable(candidate)) return candidate;
    }
  }
  return undefined;
}
