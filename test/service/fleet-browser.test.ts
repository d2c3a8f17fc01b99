/**
 * The fleet page in a real browser: the audit of the corpus archives (the real scan of real
 * repositories, `runLocalAudit`), its `fleet/index.html` opened in Debian's chromium-headless-shell
 * over the DevTools protocol (test/support/chromium.ts), with JavaScript and without.
 *
 * Checked in the rendered DOM: every repository and provider, each lock's "behind" figure against
 * one computed here from the locked versions, captions and header scopes, a text contrast of at
 * least 4.5:1 everywhere (WCAG 2.1 SC 1.4.3, relative luminance as the WCAG defines it), sorting
 * and the filter box working; in the browser's own reports: no console message, exception or CSP
 * violation, and no network request, although archive text aims images at a server on 127.0.0.1
 * (which must see nothing either). The screenshot is a PNG of the viewport's size, not blank.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { buildFleet, type FleetData } from '../../src/service/fleet';
import { renderFleetHtml } from '../../src/service/fleet-html';
import { runLocalAudit, type LocalAuditResult } from '../../src/service/local-audit';
import { LocalObjectStore } from '../../src/storage/local';
import { pngSize, renderPage, type RenderResult } from '../support/chromium';
import { corpusDir, describeWithExternal } from '../support/external';

/** Numeric parts of a plain `x.y.z` version (every version the corpus locks is one). */
function parts(v: string): number[] {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  if (m === null) throw new Error(`not a plain version: ${v}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}
function cmp(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
}

/** What the page must say for a repository locking `oldest` when the fleet's newest is `newest`. */
function expectedBehind(oldest: string, newest: string): string {
  if (cmp(oldest, newest) >= 0) return 'up to date';
  const [o, n] = [parts(oldest), parts(newest)];
  if (n[0]! > o[0]!) return `${n[0]! - o[0]!} major behind`;
  if (n[1]! > o[1]!) return `${n[1]! - o[1]!} minor behind`;
  return 'patch behind';
}

/** Rows of a table as the cells' text (header and data cells). */
const ROWS = (id: string) =>
  `[...document.querySelectorAll('#${id} tbody tr')].filter(r => !r.hidden).map(r => [...r.cells].map(c => c.textContent.trim()))`;

/** Every element with its own text whose contrast with its background is below 4.5:1. */
const CONTRAST = `(() => {
  const rgb = (s) => { const m = s.match(/[\\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
  const lin = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  const lum = (c) => 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0) return c; }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const bad = [];
  let checked = 0;
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg') || el.closest('[hidden]')) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || el.getClientRects().length === 0) continue;
    const fg = rgb(getComputedStyle(el).color);
    const bg = background(el);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    checked++;
    if (ratio < 4.5) bad.push(el.tagName + '.' + el.className + ' ' + ratio.toFixed(2) + ': ' + el.textContent.trim().slice(0, 40));
  }
  return { checked, bad: [...new Set(bad)].slice(0, 20) };
})()`;

/** Structure a screen reader relies on. */
const STRUCTURE = `(() => ({
  lang: document.documentElement.lang,
  title: document.title,
  tables: document.querySelectorAll('table').length,
  withoutCaption: [...document.querySelectorAll('table')].filter(t => !t.caption || t.caption.textContent.trim() === '').map(t => t.id),
  headWithoutScope: [...document.querySelectorAll('thead th')].filter(th => th.getAttribute('scope') !== 'col').length,
  rowHeadWithoutScope: [...document.querySelectorAll('tbody th')].filter(th => th.getAttribute('scope') !== 'row').length,
  chartsWithoutLabel: [...document.querySelectorAll('svg')].filter(s => s.getAttribute('role') !== 'img' || !s.getAttribute('aria-label')).length,
  charts: document.querySelectorAll('svg').length,
  filterShown: !document.getElementById('filter').hidden,
  sortButtons: document.querySelectorAll('th button').length,
}))()`;

/** Sorts the repositories by errors (two clicks: descending) and filters the locks by a name. */
const INTERACT = (needle: string) => `(async () => {
  const th = [...document.querySelectorAll('#repositories-table thead th')].find(t => t.textContent.trim() === 'Errors');
  th.querySelector('button').click();
  th.querySelector('button').click();
  const errors = [...document.querySelectorAll('#repositories-table tbody tr')].map(r => Number(r.cells[2].textContent));
  const input = document.getElementById('filter-input');
  input.value = ${JSON.stringify(needle)};
  input.dispatchEvent(new Event('input'));
  const shown = [...document.querySelectorAll('#locks-table tbody tr')].filter(r => !r.hidden).map(r => r.textContent);
  const status = document.getElementById('filter-status').textContent;
  return { sort: th.getAttribute('aria-sort'), errors, shown, status };
})()`;

/** Whether a PNG has more than a handful of distinct byte values (not a blank page). */
function pngVaries(png: Buffer): boolean {
  const chunks: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return new Set(inflateSync(Buffer.concat(chunks))).size > 32;
}

describeWithExternal(['corpus', 'chromium-headless-shell'], 'the fleet page in chromium', () => {
  let dir: string;
  let server: Server;
  let hits: string[];
  let audit: LocalAuditResult;
  let fleet: FleetData;
  let page: string;
  let changedPage: string;
  let shown: RenderResult;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tfguard-fleet-browser-'));
    hits = [];
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const names = (await readdir(corpusDir())).filter((n) => n.endsWith('.tar.gz')).sort();
    audit = await runLocalAudit(
      names.map((name) => ({
        repository: name.slice(0, -'.tar.gz'.length),
        name,
        read: () => readFile(join(corpusDir(), name)),
      })),
      new LocalObjectStore(join(dir, 'store')),
      { now: new Date('2026-01-05T03:00:00Z') },
    );
    fleet = audit.fleet!;
    page = join(dir, 'index.html');
    await writeFile(page, (await new LocalObjectStore(join(dir, 'store')).get(audit.keys.fleetHtml))!.body);
    shown = await renderPage(page, { evaluate: [CONTRAST, STRUCTURE] });
  }, 600_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  test('the page names every repository and provider, with the behind figures', () => {
    expect(audit.summary.totals.scanned).toBe(16);
    for (const r of fleet.repositories) expect(shown.dom).toContain(r.repository);
    for (const p of fleet.providers) expect(shown.dom).toContain(p.source.slice(p.source.indexOf('/') + 1));
    expect(fleet.providers.length).toBeGreaterThan(20);
  });

  test("each lock's behind figure matches the locked versions", async () => {
    const result = await renderPage(page, { evaluate: [ROWS('locks-table')] });
    const rows = result.values[0] as string[][];
    const newest = new Map<string, string>();
    for (const p of audit.summary.providers) {
      newest.set(p.source, p.versions.map((v) => v.version).sort((a, b) => cmp(b, a))[0]!);
    }
    const expected: string[][] = [];
    for (const r of audit.summary.repositories) {
      for (const [source, versions] of Object.entries(r.locks)) {
        const oldest = [...versions].sort(cmp)[0]!;
        expected.push([source, r.repository, expectedBehind(oldest, newest.get(source)!)]);
      }
    }
    const seen = rows.map(([provider, repository, , , behind]) => [
      provider!,
      repository!,
      behind!.replace(/ behind .*$/, ' behind'),
    ]);
    const key = (x: string[]) => x.join(' | ');
    expect(seen.map(key).sort()).toEqual(expected.map(key).sort());
    // The corpus has repositories a major line behind and some a minor line behind.
    expect(seen.some((s) => /major behind/.test(s[2]!))).toBe(true);
    expect(seen.some((s) => /minor behind/.test(s[2]!))).toBe(true);
  }, 120_000);

  test('nothing is logged and nothing is loaded', () => {
    expect(shown.console).toEqual([]);
    expect(shown.errors).toEqual([]);
    expect(shown.requests).toEqual([]);
  });

  test('tables have captions and scoped headers, charts labels, text a contrast of 4.5:1 or more', () => {
    const contrast = shown.values[0] as { checked: number; bad: string[] };
    expect(contrast.checked).toBeGreaterThan(500);
    expect(contrast.bad).toEqual([]);
    const structure = shown.values[1] as Record<string, unknown>;
    expect(structure).toMatchObject({
      lang: 'en',
      withoutCaption: [],
      headWithoutScope: 0,
      rowHeadWithoutScope: 0,
      chartsWithoutLabel: 0,
      filterShown: true,
    });
    expect(structure.charts).toBe(fleet.providers.length);
    expect(structure.sortButtons).toBeGreaterThan(30);
  });

  test('the screenshot is a rendered page of the viewport size', () => {
    expect(pngSize(shown.png)).toEqual({ width: 1280, height: 900 });
    expect(pngVaries(shown.png)).toBe(true);
  });

  test('sorting and the filter box work', async () => {
    const result = await renderPage(page, { evaluate: [INTERACT('keycloak')] });
    const state = result.values[0] as { sort: string; errors: number[]; shown: string[]; status: string };
    expect(state.sort).toBe('descending');
    expect(state.errors).toEqual([...state.errors].sort((a, b) => b - a));
    expect(state.errors[0]).toBe(Math.max(...fleet.repositories.map((r) => r.counts.error)));
    expect(state.shown.length).toBe(
      fleet.repositories.find((r) => r.repository === 'keycloak_keycloak-benchmark')!.locks.length,
    );
    expect(state.shown.every((t) => t.includes('keycloak'))).toBe(true);
    expect(state.status).toMatch(/^\d+ of \d+ rows match$/);
    expect(result.console).toEqual([]);
  }, 120_000);

  test('without JavaScript every table is there, sorted on the server, and no dead controls show', async () => {
    const result = await renderPage(page, { noScript: true, evaluate: [STRUCTURE] });
    expect(result.values[0]).toMatchObject({ filterShown: false, sortButtons: 0, withoutCaption: [] });
    for (const r of fleet.repositories) expect(result.dom).toContain(r.repository);
    expect(result.requests).toEqual([]);
  }, 120_000);

  test('changes since a previous audit, policy findings and hostile names render, and load nothing', async () => {
    const port = (server.address() as AddressInfo).port;
    const hostile = `<img src="http://127.0.0.1:${port}/removed.png">`;
    // The previous audit: keycloak was not in it, a removed repository with a hostile name was, and
    // cds-snc_scan-files locked an older aws.
    const scanFiles = fleet.repositories.find((r) => r.repository === 'cds-snc_scan-files')!;
    const aws = scanFiles.locks.find((l) => l.source === 'registry.terraform.io/hashicorp/aws')!;
    const previous: FleetData = {
      ...fleet,
      runId: '20251201T030000000Z-00000000',
      startedAt: '2025-12-01T03:00:00.000Z',
      repositories: [
        ...fleet.repositories
          .filter((r) => r.repository !== 'keycloak_keycloak-benchmark')
          .map((r) =>
            r === scanFiles
              ? {
                  ...r,
                  locks: r.locks.map((l) => (l === aws ? { ...l, versions: ['4.0.0'], oldest: '4.0.0' } : l)),
                }
              : r,
          ),
        { ...scanFiles, repository: hostile, locks: [] },
      ],
    };
    const summary = {
      ...audit.summary,
      repositories: audit.summary.repositories.map((r) =>
        r.repository === 'langburd_terraform-proxmox'
          ? {
              ...r,
              policy: [
                {
                  ruleId: 'policy-provider-denied',
                  severity: 'error' as const,
                  module: '.',
                  file: 'main.tf',
                  line: 4,
                  message: `provider bpg/proxmox is denied: <img src="http://127.0.0.1:${port}/policy.png">`,
                },
              ],
            }
          : r,
      ),
    };
    changedPage = join(dir, 'changed.html');
    await writeFile(changedPage, renderFleetHtml(buildFleet(summary, { registry: null, previous })));
    const result = await renderPage(changedPage, {
      fullPage: true,
      evaluate: [ROWS('lock-changes-table'), ROWS('policy-table'), CONTRAST],
    });
    const lockChanges = result.values[0] as string[][];
    expect(lockChanges).toContainEqual([
      'cds-snc_scan-files',
      'registry.terraform.io/hashicorp/aws',
      '4.0.0',
      aws.versions.join(', '),
      'upgrade',
    ]);
    expect(result.values[1]).toEqual([
      [
        'langburd_terraform-proxmox',
        'error',
        'policy-provider-denied',
        'main.tf:4',
        `provider bpg/proxmox is denied: <img src="http://127.0.0.1:${port}/policy.png">`,
      ],
    ]);
    expect(result.dom).toContain('1 repository added (keycloak_keycloak-benchmark), 1 removed (&lt;img');
    expect((result.values[2] as { bad: string[] }).bad).toEqual([]);
    expect(result.console).toEqual([]);
    expect(result.errors).toEqual([]);
    expect(result.requests).toEqual([]);
    expect(hits).toEqual([]);
    expect(pngSize(result.png).height).toBeGreaterThan(3000);
  }, 120_000);
});
