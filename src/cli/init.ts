/**
 * `tfguard init [dir]`: scans the directory and writes what each directory is into its
 * `.tfguard.hcl` (src/scan/init-config.ts), keeping an existing file's content and adding only
 * directories that no glob of it matches.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { InputError } from '../errors';
import { scanPath, sharedHclParser } from '../scan';
import { CONFIG_FILE_NAME } from '../scan/config-file';
import { initConfigText, KIND_KEYS } from '../scan/init-config';
import type { ScanOptions } from '../scan/types';

export interface InitIo {
  stdout: (text: string) => void;
}

/** Runs `init`; `scanOptions` are the operator's settings (timeouts, limits). Returns the exit code. */
export async function initCommand(
  values: { 'dry-run'?: boolean; timeout?: string },
  positionals: readonly string[],
  io: InitIo,
  scanOptions: (timeout: string | undefined) => ScanOptions,
): Promise<number> {
  if (positionals.length > 1)
    throw new InputError('usage', 'init takes at most one <dir>; see "tfguard init --help"');
  const dir = positionals[0] ?? '.';
  const stat = await fs.stat(dir).catch(() => null);
  if (stat === null || !stat.isDirectory()) {
    throw new InputError(
      'not-found',
      `init needs a directory (the repository checkout); "${dir}" is not one`,
    );
  }
  const file = path.join(dir, CONFIG_FILE_NAME);
  const existing = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw new InputError('not-found', `cannot read ${file}: ${err.message}`, { cause: err });
  });
  // The scan reads the existing file too: what its globs settle is not asked again.
  const report = await scanPath(dir, scanOptions(values.timeout));
  const { text, added } = await initConfigText(existing, report.modules, sharedHclParser());
  const guesses = added.filter((m) => m.kindEvidence === 'weak').length;
  if (added.length === 0) {
    io.stdout(`${file}: every directory is already named; nothing to add\n`);
    return 0;
  }
  const counts = KIND_KEYS.map(([kind, key]) => [key, added.filter((m) => m.kind === kind).length] as const)
    .filter(([, n]) => n > 0)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');
  if (values['dry-run'] === true) {
    io.stdout(text);
    return 0;
  }
  const tmp = path.join(dir, `.${CONFIG_FILE_NAME}.${process.pid}.tmp`);
  await fs.writeFile(tmp, text);
  await fs.rename(tmp, file);
  io.stdout(
    `${existing === null ? 'wrote' : 'updated'} ${file}: ${added.length} director${added.length === 1 ? 'y' : 'ies'} added (${counts})` +
      (guesses > 0
        ? `; ${guesses} marked GUESS: check them and move any wrong one to the right list\n`
        : '\n'),
  );
  return 0;
}
