/**
 * The fleet page (`fleet/index.html`, `tfguard audit --format html`): one self-contained HTML file
 * rendered from the fleet data (src/service/fleet.ts). Everything is rendered here, on the server:
 * the page reads completely without JavaScript; its one inline script only adds sorting to the
 * tables and shows a filter box. Nothing is loaded from the network: the Content-Security-Policy
 * allows no source at all (`default-src 'none'`) except the page's own inline style and script,
 * named by their SHA-256 hashes (CSP Level 3 hash sources), so neither an injected element nor a
 * changed script could load or run anything.
 *
 * Archive text (repository names, paths, sources, constraints, messages) goes through `htmlText`
 * (src/report/escape.ts) and only into element content or double-quoted attributes. Colours keep
 * a contrast of at least 4.5:1 on their backgrounds (WCAG 2.1 SC 1.4.3; checked in the browser
 * test); tables have captions and `scope`d header cells (WAI tables tutorial).
 */
import { createHash } from 'node:crypto';
import { htmlText } from '../report/escape';
import { count } from '../util/words';
import {
  FLEET_DETAIL_LIMIT,
  isBehind,
  type Behind,
  type FleetData,
  type FleetLock,
  type FleetProvider,
  type FleetRepository,
} from './fleet';
import { compareVersions, type FindingRef } from './summary';

const h = htmlText;

const STYLE = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--accent:#0550ae;--ok:#116329;
--err:#b42318;--err-bg:#fef3f2;--warn:#8a4600;--warn-bg:#fff8e6;--info-bg:#eef4fb;--mono:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
header,main,footer,nav{max-width:1180px;margin:0 auto;padding:0 24px}
header{padding-top:28px}
h1{font-size:26px;font-weight:650;letter-spacing:-.01em;margin:0 0 4px}
h2{font-size:19px;font-weight:650;margin:40px 0 6px;padding-top:8px;border-top:1px solid var(--line)}
p{margin:6px 0}
.meta,.note,caption{color:var(--muted)}
.meta{font-size:14px}
nav{margin-top:14px;font-size:14px}
nav a{color:var(--accent);margin-right:16px;text-decoration:none}
nav a:hover,nav a:focus{text-decoration:underline}
code,.mono{font-family:var(--mono);font-size:13px}
.host{color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px;margin:22px 0 0;padding:0}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;margin:0}
.card dt{font-size:13px;color:var(--muted)}
.card dd{margin:2px 0 0;font-size:24px;font-weight:650;font-variant-numeric:tabular-nums}
.card dd small{display:block;font-size:13px;font-weight:400;color:var(--muted)}
.filter{margin:22px 0 0;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.filter[hidden]{display:none}
.filter label{font-weight:600;font-size:14px}
.filter input{font:inherit;padding:6px 10px;border:1px solid #818b98;border-radius:6px;min-width:300px}
.filter input:focus{outline:2px solid var(--accent);outline-offset:1px}
.scroll{overflow-x:auto;margin:10px 0 0}
table{border-collapse:collapse;width:100%;font-size:14px}
caption{text-align:left;font-size:13px;padding:0 0 6px;caption-side:top}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:middle}
.versions{margin-top:2px;max-width:520px;line-height:1.45}
.nowrap{white-space:nowrap}
thead th{background:var(--soft);font-weight:600;font-size:13px;white-space:nowrap;border-bottom:1px solid #b7c0ca}
tbody th{font-weight:500}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:hover{background:#f6f8fa}
th button{all:unset;cursor:pointer;display:inline-flex;gap:4px;align-items:center}
th button:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
th button::after{content:"\\2195";color:var(--muted);font-size:11px}
th[aria-sort=ascending] button::after{content:"\\2191";color:var(--fg)}
th[aria-sort=descending] button::after{content:"\\2193";color:var(--fg)}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;white-space:nowrap}
.b-major,.s-error{background:var(--err-bg);color:var(--err)}
.b-minor,.s-warning{background:var(--warn-bg);color:var(--warn)}
.b-patch,.s-notice{background:var(--info-bg);color:#0a3069}
.b-ok{color:var(--ok);background:#eaf7ee}
.s-rejected,.s-failed,.s-missing{background:var(--err-bg);color:var(--err)}
.s-scanned{background:#eaf7ee;color:var(--ok)}
.sub{color:var(--muted);font-size:12px}
.chart{display:block}
.chart .bar{fill:#8aa4c1}
.chart .bar.newest{fill:#1f6feb}
.chart .axis{stroke:#b7c0ca}
.empty{color:var(--muted);font-style:italic}
.scroll+p{margin-top:20px}
footer{margin-top:48px;padding-bottom:32px;font-size:13px;color:var(--muted)}
@media print{.filter,nav{display:none}}
`;

const SCRIPT = `
(function(){
  "use strict";
  var box=document.getElementById("filter");
  var input=document.getElementById("filter-input");
  var status=document.getElementById("filter-status");
  var rows=Array.prototype.slice.call(document.querySelectorAll("table.filterable tbody tr"));
  box.hidden=false;
  input.addEventListener("input",function(){
    var q=input.value.trim().toLowerCase();var shown=0;
    rows.forEach(function(r){var hit=q===""||r.textContent.toLowerCase().indexOf(q)!==-1;r.hidden=!hit;if(hit)shown++;});
    status.textContent=q===""?"":shown+" of "+rows.length+" rows match";
  });
  function key(cell,type){
    var v=cell.getAttribute("data-sort");if(v===null)v=cell.textContent.trim();
    if(type==="num"){var n=parseFloat(v);return isNaN(n)?-Infinity:n;}
    return v.toLowerCase();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"),function(table){
    var heads=table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads,function(th,col){
      var b=document.createElement("button");b.type="button";
      while(th.firstChild)b.appendChild(th.firstChild);th.appendChild(b);
      b.addEventListener("click",function(){
        var dir=th.getAttribute("aria-sort")==="ascending"?"descending":"ascending";
        Array.prototype.forEach.call(heads,function(o){o.removeAttribute("aria-sort");});
        th.setAttribute("aria-sort",dir);
        var type=th.getAttribute("data-type")||"text";var body=table.tBodies[0];
        var list=Array.prototype.slice.call(body.rows).map(function(r,i){return{r:r,k:key(r.cells[col],type),i:i};});
        list.sort(function(a,b){var c=a.k<b.k?-1:a.k>b.k?1:0;if(dir==="descending")c=-c;return c||a.i-b.i;});
        list.forEach(function(e){body.appendChild(e.r);});
      });
    });
  });
})();
`;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}

/** The page's Content-Security-Policy: nothing but its own inline style and script. */
export const FLEET_CSP =
  `default-src 'none'; style-src 'sha256-${sha256(STYLE)}'; script-src 'sha256-${sha256(SCRIPT)}'; ` +
  `img-src 'none'; base-uri 'none'; form-action 'none'`;

function source(s: string): string {
  const slash = s.indexOf('/');
  const parts = s.split('/');
  if (parts.length === 3 && slash > 0)
    return `<span class="mono"><span class="host">${h(s.slice(0, slash + 1))}</span>${h(s.slice(slash + 1))}</span>`;
  return `<span class="mono">${h(s)}</span>`;
}

function code(s: string): string {
  return `<code>${h(s)}</code>`;
}

/** A sort key for a version: zero-padded numeric parts (good enough to order a table). */
function versionKey(v: string): string {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-.*)?/.exec(v);
  if (m === null) return `~${v}`;
  const pad = (x: string | undefined) => (x ?? '0').padStart(8, '0');
  return `${pad(m[1])}.${pad(m[2])}.${pad(m[3])}${m[4] === undefined ? '~' : m[4]}`;
}

/** One number ordering "behind" figures: majors, then minors, then releases. */
function behindKey(b: Behind | null): number {
  if (b === null) return -1;
  return b.majors * 1e8 + (b.minors ?? 9999) * 1e4 + b.releases;
}

/** "1 major · 3 newer" or "up to date". */
function behindCell(b: Behind | null, what: 'fleet' | 'registry'): string {
  if (b === null) return `<td data-sort="-1"><span class="sub">not known</span></td>`;
  if (!isBehind(b)) return `<td data-sort="0"><span class="badge b-ok">up to date</span></td>`;
  const [cls, lines] =
    b.majors > 0
      ? ['b-major', `${b.majors} major`]
      : (b.minors ?? 0) > 0
        ? ['b-minor', `${b.minors ?? 0} minor`]
        : ['b-patch', 'patch'];
  const releases =
    what === 'fleet'
      ? `${count(b.releases, 'newer version')} in the fleet`
      : count(b.releases, 'newer release');
  return `<td data-sort="${behindKey(b)}" class="nowrap"><span class="badge ${cls}">${lines} behind</span> <span class="sub">${releases}</span></td>`;
}

function severityBadge(s: string): string {
  return `<span class="badge s-${h(s)}">${h(s)}</span>`;
}

function where(f: FindingRef): string {
  const loc = f.file ?? f.module;
  return code(f.line === undefined || f.line === null ? loc : `${loc}:${f.line}`);
}

/** A small bar chart of a provider's versions (oldest left, newest right). */
function chart(p: FleetProvider): string {
  const versions = [...p.versions].reverse();
  const max = Math.max(1, ...versions.map((v) => v.repositories.length));
  const width = 180;
  const height = 36;
  const gap = 2;
  const bar = Math.max(3, Math.min(14, Math.floor((width - gap * versions.length) / versions.length)));
  const used = versions.length * (bar + gap);
  const label =
    `${p.source}: ${count(p.versions.length, 'version')} locked, ` +
    p.versions
      .map((v) => `${v.version} by ${count(v.repositories.length, 'repository', 'repositories')}`)
      .join(', ');
  const bars = versions
    .map((v, i) => {
      const bh = Math.max(2, Math.round((v.repositories.length / max) * (height - 4)));
      const cls = v.version === p.newest ? 'bar newest' : 'bar';
      return (
        `<rect class="${cls}" x="${i * (bar + gap)}" y="${height - bh}" width="${bar}" height="${bh}" rx="1">` +
        `<title>${h(v.version)}: ${count(v.repositories.length, 'repository', 'repositories')}</title></rect>`
      );
    })
    .join('');
  return (
    `<svg class="chart" role="img" aria-label="${h(label)}" width="${Math.max(used, 24)}" height="${height + 1}" ` +
    `viewBox="0 0 ${Math.max(used, 24)} ${height + 1}" xmlns="http://www.w3.org/2000/svg">` +
    `${bars}<line class="axis" x1="0" y1="${height + 0.5}" x2="${Math.max(used, 24)}" y2="${height + 0.5}"/></svg>`
  );
}

function table(
  id: string,
  caption: string,
  head: { label: string; type?: 'num' | 'text'; left?: boolean }[],
  rows: string[],
  empty: string,
): string {
  if (rows.length === 0) return `<p class="empty" id="${id}">${empty}</p>`;
  const ths = head
    .map(
      (c) =>
        `<th scope="col"${c.type === 'num' ? ' data-type="num"' : ''}${c.type === 'num' && c.left !== true ? ' class="num"' : ''}>${c.label}</th>`,
    )
    .join('');
  return (
    `<div class="scroll"><table id="${id}" class="sortable filterable"><caption>${caption}</caption>` +
    `<thead><tr>${ths}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`
  );
}

function providersSection(fleet: FleetData): string {
  // The providers with repositories behind first, then those locked at most versions.
  const ordered = [...fleet.providers].sort(
    (a, b) =>
      b.behind - a.behind ||
      b.versions.length - a.versions.length ||
      (a.source < b.source ? -1 : a.source > b.source ? 1 : 0),
  );
  const rows = ordered.map((p) => {
    const reg =
      p.registry === null
        ? ''
        : p.registry.status === 'ok'
          ? `<td data-sort="${versionKey(p.registry.newest)}">${code(p.registry.newest)}</td>`
          : `<td data-sort=""><span class="sub">${h(p.registry.reason)}</span></td>`;
    const list = p.versions
      .map((v) => `<span class="nowrap">${h(v.version)}&nbsp;×${v.repositories.length}</span>`)
      .join(' · ');
    const repositories = new Set(p.versions.flatMap((v) => v.repositories)).size;
    return (
      `<tr><th scope="row" data-sort="${h(p.source)}">${source(p.source)}<div class="sub versions">${list}</div></th>` +
      `<td class="num">${p.versions.length}</td><td class="num">${repositories}</td>` +
      `<td data-sort="${versionKey(p.newest)}">${code(p.newest)}</td>${reg}` +
      `<td class="num">${p.behind}</td><td data-sort="${p.versions.length}">${chart(p)}</td></tr>`
    );
  });
  const head = [
    { label: 'Provider and versions locked (× repositories)' },
    { label: 'Versions', type: 'num' as const },
    { label: 'Repositories', type: 'num' as const },
    { label: 'Newest in fleet' },
    ...(fleet.registry ? [{ label: 'Registry newest' }] : []),
    { label: 'Behind', type: 'num' as const },
    { label: 'Distribution', type: 'num' as const, left: true },
  ];
  return table(
    'providers-table',
    'Every provider locked in the fleet. Behind: repositories locking an older version than the newest in the fleet. Distribution: one bar per version, oldest left, newest (blue) right; height = repositories.',
    head,
    rows,
    'No repository has a lock file.',
  );
}

function locksSection(fleet: FleetData): string {
  const rows: { source: string; lock: FleetLock; repo: FleetRepository }[] = [];
  for (const repo of fleet.repositories)
    for (const lock of repo.locks) rows.push({ source: lock.source, lock, repo });
  rows.sort(
    (a, b) =>
      (a.source < b.source ? -1 : a.source > b.source ? 1 : 0) ||
      compareVersions(b.lock.oldest, a.lock.oldest) ||
      (a.repo.repository < b.repo.repository ? -1 : 1),
  );
  const html = rows.map(({ lock, repo }) => {
    const locked = lock.versions.map(code).join(', ');
    const reg = fleet.registry
      ? `<td data-sort="${lock.registry === null ? '' : versionKey(lock.registry.newest)}">${lock.registry === null ? '<span class="sub">not known</span>' : code(lock.registry.newest)}</td>${behindCell(lock.registry, 'registry')}`
      : '';
    return (
      `<tr><td data-sort="${h(lock.source)}">${source(lock.source)}</td><th scope="row" class="nowrap">${h(repo.repository)}</th>` +
      `<td data-sort="${versionKey(lock.oldest)}">${locked}</td>` +
      `<td data-sort="${versionKey(lock.fleet.newest)}">${code(lock.fleet.newest)}</td>${behindCell(lock.fleet, 'fleet')}${reg}</tr>`
    );
  });
  const head = [
    { label: 'Provider' },
    { label: 'Repository' },
    { label: 'Locked' },
    { label: 'Newest in fleet' },
    { label: 'Behind the fleet', type: 'num' as const, left: true },
    ...(fleet.registry
      ? [{ label: 'Registry newest' }, { label: 'Behind the registry', type: 'num' as const, left: true }]
      : []),
  ];
  return table(
    'locks-table',
    'Each repository’s locked version of each provider (several when its roots differ; “behind” counts from the oldest), against the newest locked in the fleet' +
      (fleet.registry ? ' and the newest release in the registry.' : '.'),
    head,
    html,
    'No repository has a lock file.',
  );
}

function requiredSection(fleet: FleetData): string {
  const rows = fleet.requiredVersions.map(
    (r) =>
      `<tr><th scope="row" data-sort="${h(r.constraint)}">${code(r.constraint)}</th><td class="num">${r.repositories.length}</td>` +
      `<td class="num">${r.modules}</td><td>${r.repositories.map(h).join(', ')}</td></tr>`,
  );
  const engines = fleet.repositories
    .filter((r) => r.status === 'scanned')
    .map((r) => {
      const list = r.requiredVersions.map((c) => code(c.constraint)).join(', ');
      return (
        `<tr><th scope="row">${h(r.repository)}</th><td>${r.engines.length === 0 ? '<span class="sub">no root</span>' : r.engines.map((e) => (e === 'opentofu' ? 'OpenTofu' : 'Terraform')).join(', ')}</td>` +
        `<td class="num">${r.requiredVersions.length}</td><td>${list === '' ? '<span class="badge s-warning">none stated</span>' : list}</td></tr>`
      );
    });
  return (
    table(
      'required-table',
      'Each Terraform / OpenTofu required_version constraint stated in the fleet, with the repositories and modules stating it.',
      [
        { label: 'Constraint' },
        { label: 'Repositories', type: 'num' },
        { label: 'Modules', type: 'num' },
        { label: 'Stated in' },
      ],
      rows,
      'No module states required_version.',
    ) +
    table(
      'engines-table',
      'Per repository: the engine its roots run with and the required_version constraints it states.',
      [
        { label: 'Repository' },
        { label: 'Engine' },
        { label: 'Constraints', type: 'num' },
        { label: 'required_version' },
      ],
      engines,
      'No repository was scanned.',
    )
  );
}

function modulesSection(fleet: FleetData): string {
  const rows = fleet.repositories.flatMap((r) => {
    const bySource = new Map<string, { version: string | null; calls: number }[]>();
    for (const m of r.moduleVersions) bySource.set(m.source, [...(bySource.get(m.source) ?? []), m]);
    return [...bySource.entries()].map(([src, versions]) => {
      const calls = versions.reduce((n, v) => n + v.calls, 0);
      const list = versions
        .map(
          (v) =>
            `<span class="nowrap">${v.version === null ? '<span class="badge s-warning">no version</span>' : code(v.version)}` +
            `${v.calls > 1 ? ` <span class="sub">×${v.calls}</span>` : ''}</span>`,
        )
        .join(' · ');
      const unpinned = versions.some((v) => v.version === null);
      return (
        `<tr><th scope="row" class="nowrap">${h(r.repository)}</th><td>${code(src)}</td>` +
        `<td data-sort="${unpinned ? '' : h(versions[0]?.version ?? '')}">${list}</td><td class="num">${calls}</td></tr>`
      );
    });
  });
  return table(
    'modules-table',
    'Registry modules each repository calls, with the version constraints of its calls (× calls).',
    [{ label: 'Repository' }, { label: 'Module' }, { label: 'Versions' }, { label: 'Calls', type: 'num' }],
    rows,
    'No repository calls a registry module.',
  );
}

function findingRow(repository: string, f: FindingRef, extra = ''): string {
  return (
    `<tr><th scope="row">${h(repository)}</th>${extra}<td data-sort="${h(f.severity)}">${severityBadge(f.severity)}</td>` +
    `<td>${code(f.ruleId)}</td><td>${where(f)}</td><td>${h(f.message)}</td></tr>`
  );
}

function policySection(fleet: FleetData): string {
  const rows = fleet.repositories.flatMap((r) => r.policy.map((f) => findingRow(r.repository, f)));
  return table(
    'policy-table',
    'Findings of the organisation policy (rules whose id starts with policy-), per repository.',
    [
      { label: 'Repository' },
      { label: 'Severity' },
      { label: 'Rule' },
      { label: 'Where' },
      { label: 'Message' },
    ],
    rows,
    'No policy findings: no rule whose id starts with <code>policy-</code> reported anything.',
  );
}

function changesSection(fleet: FleetData): string {
  const parts: string[] = [];
  const c = fleet.changes;
  if (fleet.previousRunId === null && c === null)
    return '<p class="empty">No previous audit to compare with.</p>';
  const compared = fleet.repositories.filter((r) => r.compared);
  const newCount = compared.reduce((n, r) => n + r.newCount, 0);
  const fixedCount = compared.reduce((n, r) => n + r.fixedCount, 0);
  if (fleet.previousRunId !== null) {
    parts.push(
      `<p>Findings compared with audit <code>${h(fleet.previousRunId)}</code>: <strong>${count(newCount, 'new finding')}</strong>, ` +
        `<strong>${count(fixedCount, 'fixed finding')}</strong> in ${count(compared.length, 'repository', 'repositories')}.</p>`,
    );
  }
  const rows: string[] = [];
  let more = 0;
  for (const r of compared) {
    for (const f of r.new)
      rows.push(findingRow(r.repository, f, '<td><span class="badge s-error">new</span></td>'));
    for (const f of r.fixed)
      rows.push(findingRow(r.repository, f, '<td><span class="badge b-ok">fixed</span></td>'));
    more += r.newCount - r.new.length + (r.fixedCount - r.fixed.length);
  }
  if (fleet.previousRunId !== null) {
    parts.push(
      table(
        'findings-changes-table',
        `New and fixed findings per repository (at most ${FLEET_DETAIL_LIMIT} of each per repository are listed${more > 0 ? `; ${more} more are in the audit summary` : ''}).`,
        [
          { label: 'Repository' },
          { label: 'Change' },
          { label: 'Severity' },
          { label: 'Rule' },
          { label: 'Where' },
          { label: 'Message' },
        ],
        rows,
        'No finding is new or fixed.',
      ),
    );
  }
  if (c !== null) {
    parts.push(
      `<p>Fleet compared with audit <code>${h(c.previous.runId)}</code> of ${h(c.previous.startedAt)}: ` +
        `${count(c.added.length, 'repository', 'repositories')} added${c.added.length > 0 ? ` (${c.added.map(h).join(', ')})` : ''}, ` +
        `${c.removed.length} removed${c.removed.length > 0 ? ` (${c.removed.map(h).join(', ')})` : ''}, ` +
        `${count(c.locks.length, 'lock change')}.</p>`,
    );
    const lockRows = c.locks.map(
      (l) =>
        `<tr><th scope="row">${h(l.repository)}</th><td>${source(l.source)}</td><td>${l.before.map(code).join(', ') || '–'}</td>` +
        `<td>${l.after.map(code).join(', ') || '–'}</td><td><span class="badge ${l.change === 'upgrade' ? 'b-ok' : l.change === 'downgrade' ? 'b-major' : 'b-patch'}">${l.change}</span></td></tr>`,
    );
    parts.push(
      table(
        'lock-changes-table',
        'Locked provider versions that changed since the previous audit.',
        [
          { label: 'Repository' },
          { label: 'Provider' },
          { label: 'Before' },
          { label: 'After' },
          { label: 'Change' },
        ],
        lockRows,
        'No locked provider version changed.',
      ),
    );
    const statusRows = [
      ...c.status.map(
        (s) =>
          `<tr><th scope="row">${h(s.repository)}</th><td>${severityBadge(s.before)} → ${severityBadge(s.after)}</td><td></td></tr>`,
      ),
      ...c.counts.map(
        (s) =>
          `<tr><th scope="row">${h(s.repository)}</th><td>scanned</td><td>errors ${s.before.error} → ${s.after.error}, ` +
          `warnings ${s.before.warning} → ${s.after.warning}, notices ${s.before.notice} → ${s.after.notice}</td></tr>`,
      ),
    ];
    if (statusRows.length > 0)
      parts.push(
        table(
          'status-changes-table',
          'Repositories whose status or finding counts changed.',
          [{ label: 'Repository' }, { label: 'Status' }, { label: 'Findings' }],
          statusRows,
          '',
        ),
      );
  }
  return parts.join('\n');
}

function repositoriesSection(fleet: FleetData): string {
  const rows = fleet.repositories.map((r) => {
    const behind = r.locks.filter((l) => isBehind(l.fleet)).length;
    const diff = (n: number) =>
      r.compared ? `<td class="num">${n}</td>` : '<td class="num" data-sort="-1">–</td>';
    return (
      `<tr><th scope="row">${h(r.repository)}</th><td data-sort="${r.status}"><span class="badge s-${r.status}">${r.status}</span>` +
      `${r.reason === null ? '' : ` <span class="sub">${h(r.reason)}</span>`}</td>` +
      `<td class="num">${r.counts.error}</td><td class="num">${r.counts.warning}</td><td class="num">${r.counts.notice}</td>` +
      `${diff(r.newCount)}${diff(r.fixedCount)}<td class="num">${r.locks.length}</td><td class="num">${behind}</td>` +
      `<td class="num">${r.policy.length}</td></tr>`
    );
  });
  return table(
    'repositories-table',
    'Every repository of the audit: its status, findings by severity, changes since the previous audit, and its locked providers.',
    [
      { label: 'Repository' },
      { label: 'Status' },
      { label: 'Errors', type: 'num' },
      { label: 'Warnings', type: 'num' },
      { label: 'Notices', type: 'num' },
      { label: 'New', type: 'num' },
      { label: 'Fixed', type: 'num' },
      { label: 'Providers', type: 'num' },
      { label: 'Behind', type: 'num' },
      { label: 'Policy', type: 'num' },
    ],
    rows,
    'The audit has no repositories.',
  );
}

function cards(fleet: FleetData): string {
  const t = fleet.totals;
  const skew = fleet.providers.filter((p) => p.versions.length > 1).length;
  const behind = fleet.repositories.reduce((n, r) => n + r.locks.filter((l) => isBehind(l.fleet)).length, 0);
  const locks = fleet.repositories.reduce((n, r) => n + r.locks.length, 0);
  const policy = fleet.repositories.reduce((n, r) => n + r.policy.length, 0);
  const card = (label: string, value: string | number, small: string) =>
    `<div class="card"><dt>${label}</dt><dd>${value}<small>${small}</small></dd></div>`;
  return (
    '<dl class="cards">' +
    card(
      'Repositories',
      t.repositories,
      `${t.scanned} scanned${t.rejected + t.missing + t.failed > 0 ? `, ${t.rejected + t.missing + t.failed} not` : ''}`,
    ) +
    card('Providers', fleet.providers.length, `${skew} locked at several versions`) +
    card(
      'Locks behind',
      `${behind}<span class="sub"> / ${locks}</span>`,
      'repository locks older than the fleet’s newest',
    ) +
    card('Findings', t.findings.total, `${t.findings.error} errors, ${t.findings.warning} warnings`) +
    card('Policy findings', policy, 'from the policy-* rules') +
    card(
      'Since the last audit',
      fleet.previousRunId === null ? '–' : `+${t.new} / −${t.fixed}`,
      fleet.previousRunId === null ? 'no previous audit' : 'new / fixed findings',
    ) +
    '</dl>'
  );
}

/** The fleet page for `fleet`: one self-contained HTML document. */
export function renderFleetHtml(fleet: FleetData): string {
  const title = `Fleet audit ${fleet.runId}`;
  const sections: [string, string, string][] = [
    ['providers', 'Providers', providersSection(fleet)],
    ['locks', 'Locked versions by repository', locksSection(fleet)],
    ['changes', 'Since the previous audit', changesSection(fleet)],
    ['policy', 'Policy findings', policySection(fleet)],
    ['repositories', 'Repositories', repositoriesSection(fleet)],
    ['required-version', 'Terraform / OpenTofu required_version', requiredSection(fleet)],
    ['modules', 'Registry modules', modulesSection(fleet)],
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${FLEET_CSP}">
<meta name="referrer" content="no-referrer">
<title>${h(title)} · tfguard</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Fleet audit</h1>
<p class="meta">Audit <code>${h(fleet.runId)}</code>, started ${h(fleet.startedAt)} · ${count(fleet.totals.repositories, 'repository', 'repositories')} · ${fleet.registry ? 'registry checked' : 'registry not asked (run with --registry for the newest releases)'}</p>
${cards(fleet)}
</header>
<nav aria-label="Sections">${sections.map(([id, label]) => `<a href="#${id}">${label}</a>`).join('')}</nav>
<main>
<div class="filter" id="filter" hidden><label for="filter-input">Filter rows</label><input id="filter-input" type="search" placeholder="repository, provider, version, rule…" autocomplete="off"><span id="filter-status" class="note" aria-live="polite"></span></div>
${sections.map(([id, label, body]) => `<section id="${id}" aria-labelledby="${id}-h"><h2 id="${id}-h">${label}</h2>\n${body}\n</section>`).join('\n')}
</main>
<footer>Generated by tfguard ${h(fleet.tool.version)} from the audit’s fleet data (<code>fleet/index.json</code>). Versions are ordered as Terraform orders them.</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
