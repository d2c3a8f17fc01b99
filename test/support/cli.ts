/** The CLI run in-process, its output captured: what the CLI, fix and audit suites call. */
import { runCli, type CliIo } from '../../src/cli/main';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `tfguard <argv>` through `runCli`, with stdout and stderr collected (a terminal when `isTTY`). */
export async function cli(argv: string[], isTTY = false): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), isTTY };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
