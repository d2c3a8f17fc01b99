/**
 * `tsx scripts/fleet-screenshot.ts [--out docs/fleet.png] [--html FILE] [--height PX]`: audits the
 * corpus archives (`runLocalAudit`, as `tfguard audit <corpus>` does), renders the fleet page in
 * chromium-headless-shell (test/support/chromium.ts) and writes the top of it as a PNG, 1280 CSS
 * pixels wide: the screenshot the README shows. `--html` also keeps the page itself.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runLocalAudit } from '../src/service/local-audit';
import { LocalObjectStore } from '../src/storage/local';
import { renderPage } from '../test/support/chromium';
import { corpusStatus } from '../test/support/external';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    return i === -1 ? fallback : (args[i + 1] ?? fallback);
  };
  const out = option('--out', path.resolve(__dirname, '..', 'docs', 'fleet.png'));
  const height = Number(option('--height', '1000'));
  const corpus = corpusStatus();
  if (!corpus.ok) throw new Error(corpus.reason);
  const names = readdirSync(corpus.value)
    .filter((n) => n.endsWith('.tar.gz'))
    .sort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tfguard-fleet-shot-'));
  try {
    const store = new LocalObjectStore(path.join(dir, 'store'));
    const result = await runLocalAudit(
      names.map((name) => ({
        repository: name.slice(0, -'.tar.gz'.length),
        name,
        read: () => readFile(path.join(corpus.value, name)),
      })),
      store,
      { now: new Date('2026-01-05T03:00:00Z') },
    );
    const page = path.join(dir, 'index.html');
    writeFileSync(page, (await store.get(result.keys.fleetHtml))!.body);
    if (args.includes('--html'))
      writeFileSync(option('--html', ''), (await store.get(result.keys.fleetHtml))!.body);
    const shot = await renderPage(page, { height, clip: { x: 0, y: 0, width: 1280, height } });
    if (shot.console.length + shot.errors.length + shot.requests.length > 0)
      throw new Error(`the page logged or loaded something: ${JSON.stringify(shot)}`);
    writeFileSync(out, shot.png);
    process.stdout.write(`${out}: ${shot.png.length} bytes\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
