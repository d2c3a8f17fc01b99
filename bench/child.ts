/**
 * The bench's child protocol: a measurement runs in a fresh process (`<script> --child KIND ...`,
 * bench/run.ts) and prints one `@@RESULT <json>` line. Shared by bench/run.ts and bench/compare.ts
 * (which runs another checkout's bench/run.ts the same way).
 */
import { spawn } from 'node:child_process';

export type ChildResult = Record<string, unknown>;

/** Runs `script --child kind ...args` with this process's Node and loader flags, in `cwd`. */
export function runBenchChild(
  script: string,
  cwd: string,
  kind: string,
  args: string[],
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, script, '--child', kind, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.on('error', reject);
    p.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@RESULT '));
      if (code !== 0 || line === undefined) {
        reject(
          new Error(
            `${script} --child ${kind} ${args.join(' ')} failed (${String(code)}): ${out.slice(-2000)}`,
          ),
        );
      } else {
        resolve(JSON.parse(line.slice('@@RESULT '.length)) as ChildResult);
      }
    });
  });
}
