/**
 * The real `terraform init` as the oracle for src/constraints: a filesystem mirror of fake
 * providers, one init per case (offline), comparing
 *   (a) the selected version (lock file) or the failure with maxSatisfying(),
 *   (b) the lock's `constraints` (and the "matching" line on failures) with normalizeConstraints(),
 *   (c) that invalid strings are rejected by terraform exactly when validateConstraints() objects,
 *   (d) which lock-file `constraints` strings terraform accepts, with isNormalized().
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  findConflict,
  isNormalized,
  maxSatisfying,
  normalizeConstraints,
  parseConstraints,
  satisfies,
  validateConstraints,
} from '../../src/constraints';
import { hclQuoted } from '../../src/lockfile';
import {
  mapLimit,
  readLockFile,
  requiredProvidersTf,
  runTerraform,
  terraformInit,
  withMirror,
  writeTree,
  type Mirror,
  type TerraformResult,
} from '../support/terraform';
import { describeWithTerraform } from '../support/external';

const FAKE = 'registry.terraform.io/hashicorp/fake';
const QUIRK = 'registry.terraform.io/hashicorp/quirk';
const FAKE_VERSIONS = [
  '0.9.0',
  '1.0.0',
  '1.0.1',
  '1.1.0',
  '1.2.0-beta1',
  '1.2.0',
  '2.0.0-rc1',
  '2.0.0',
  '2.1.3',
  '3.0.0',
];
/** Pre-releases where go-versions' ordering differs from SemVer's. */
const QUIRK_VERSIONS = [
  '1.4.0',
  '1.5.0-alpha.1',
  '1.5.0-beta',
  '1.5.0-rc.9',
  '1.5.0-rc.10',
  '1.5.0-rc2',
  '1.5.0-rc1.x',
];

const FAKE_CASES: string[] = [
  // pessimistic operator, 1–3 parts
  '~> 2',
  '~>2.0',
  '~> 2.0.1',
  '~> 1.2.0',
  '~> 1.0',
  '~> 1',
  '~> 0',
  '~> 0.9',
  '~> 3.0.0',
  // comparison operators and whitespace
  '>=1.0',
  '>= 1.0',
  ' >= 1.0 ',
  '\t>= 1.0\n',
  '>1.0.0',
  '> 1.0, < 1.1',
  '<1.0.0',
  '< 1',
  '<= 2.0.0',
  '!=1.0.0',
  '!=3.0.0, != 2.1.3',
  '>= 1.0 ,< 2',
  '> 3.0.0',
  '>= 2.1.3, <= 2.1.3',
  '< 0.9.0',
  '>= 0',
  // exact versions
  '1.0.0',
  '= 1',
  '= 1.1',
  '1',
  '2.0',
  '01.0',
  '0',
  // pre-releases
  '= 1.2.0-beta1',
  '1.2.0-beta1',
  '>= 1.2.0-beta1',
  '<= 2.0.0-rc1',
  '~> 1.2.0-beta1',
  '~> 1-beta',
  '~> 1.2-beta1',
  '~> 2.0.0-rc1',
  '>= 2.0.0-rc1, < 2.1.0',
  '> 2.0.0-rc1, < 2.0.0',
  '2.0.0-rc1, ~> 2.0',
  '1.2.0-beta1, < 1.2.0',
  '1.2.0-beta1, > 1.2.0',
  '1.2.0-beta1, != 1.2.0-beta1',
  '1.2.0-beta1, 1.2.0',
  '1.2.0-beta1, >= 1.2.0-beta1, != 1.1.0',
  '1.0--1',
  // go-versions quirk: a dangling "-" is dropped
  '1.0-',
  '1.0- , < 2',
  '> 1.0.0-',
  // build metadata
  '>= 1.0.0+a.b-c',
  '1.2.0+abc',
  '1.0.0+abc, >= 1',
  '>= 1.0.0+zzz, >= 1.0.0+aaa, >= 1.0.0',
  // normalization: dedup and ordering
  '< 2, > 1, >= 1.5, <= 1.5, != 1.5, ~> 1.5, ~> 1.5.0, 1.5',
  '>= 1.0, >= 1.0.0, ~> 1.0',
  '~> 1.0, != 1.2.0, != 1.1.0',
  '>= 1.0.1, < 1.1.0, != 1.0.1',
  '~> 1.0.0, ~> 1.0',
  // invalid
  '',
  ' ',
  '>= 1.0,',
  ',>= 1',
  '>= 1.0, ,< 2',
  '1.0.0.0',
  '=> 1',
  '=< 2',
  '==1.0',
  '^1.0',
  '~1.0',
  '!1.0',
  'v1.0.0',
  '>= v1.0',
  '>=v1',
  'V1.0',
  '>=  1.0',
  '>=\t1.0',
  '1.0beta',
  '1.0-a..b',
  '1.0-a~b',
  '1.0.0-+abc',
  '1.0.0+',
  '>= 1.0 < 2.0',
  '>= 1.0 || < 2',
  '1.0 - 2.0',
  '1.x',
  '~> 1.*',
  '*',
  'latest',
  '>= 1.99999999999999999999',
  '>= 1.0\v',
  '\v>= 1.0',
  '>= 1.0\u00a0',
];

const QUIRK_CASES: string[] = [
  '1.5.0-beta, > 1.5.0-alpha.1',
  '1.5.0-beta, < 1.5.0-alpha.1',
  '1.5.0-rc.10, > 1.5.0-rc.9',
  '1.5.0-rc2, < 1.5.0-rc1.x',
  '1.5.0-rc2, > 1.5.0-rc1.x',
  '>= 1.5.0-alpha.1',
  '> 1.5.0-rc1.x, > 1.5.0-rc2, > 1.5.0-beta, > 1.5.0-alpha.1, > 1.5.0-rc.10, > 1.5.0-rc.9',
];

interface MultiCase {
  name: string;
  /** Module path (`.` = root) → constraint for `fake`, or undefined for no `version`. */
  modules: Record<string, string | undefined>;
}

const MULTI_CASES: MultiCase[] = [
  { name: 'root caps, child sets a minimum', modules: { '.': '~> 1.0', a: '>= 1.1' } },
  { name: 'three levels', modules: { '.': '~> 2.0', a: '>= 1.0, < 3.0', 'a/b': '!= 2.1.3' } },
  { name: 'conflicting pair', modules: { '.': '~> 1.0', a: '>= 2.0' } },
  { name: 'exact pin in a child', modules: { '.': '>= 1.0', a: '~> 1.0', b: '1.1.0' } },
  { name: 'pinned pre-release in the root', modules: { '.': '1.2.0-beta1', a: '>= 1.0' } },
  { name: 'root without version, equivalent ~>', modules: { '.': undefined, a: '~> 2', b: '~> 2.0' } },
  { name: 'invalid child constraint', modules: { '.': '~> 1.0', a: '=> 1' } },
  {
    name: '!= excludes every available version',
    modules: { '.': '>= 1.0.0, < 1.1.0', a: '!= 1.0.0', b: '!= 1.0.1' },
  },
  { name: 'three-way conflict via !=', modules: { '.': '>= 1.0.0, < 1.0.2', a: '!= 1.0.0', b: '!= 1.0.1' } },
  { name: 'patch-level cap', modules: { '.': '>= 1.0', a: '~> 1.0.0', b: '< 1.0.1' } },
  { name: 'no constraints at all', modules: { '.': undefined, a: undefined } },
  { name: 'same constraint twice', modules: { '.': '>= 1.0.0', a: '>=1.0', b: '>= 1' } },
];

const LOCK_CANDIDATES: string[] = [
  '',
  '>= 1.0',
  '>= 1.0.0',
  '~> 1.0',
  '~>1.0',
  '~> 1.0, >= 1.0.0',
  '>= 1.0.0, ~> 1.0',
  '~> 1',
  '~> 1.0.0',
  '>= 1.0.0,  ~> 1.0',
  '1.0.0-a..b',
  '= 1.2.0',
  '1.2.0',
  '>= 1.0.0, >= 1.0.0',
  '!= 1.1.0, ~> 1.0',
  '~> 1.0, != 1.1.0',
  '>= 1.0.0-beta+x',
  '>= 1.0.0,',
  ' >= 1.0.0',
  '>= 1.0.0-',
];

interface Outcome {
  result: TerraformResult;
  version: string | null;
  constraints: string | null;
  /** The constraint string from `- Finding NS/TYPE versions matching "..."`. */
  matching: string | null;
}

let mirror: Mirror;
const fakeOutcomes = new Map<string, Outcome>();
const quirkOutcomes = new Map<string, Outcome>();
const multiOutcomes = new Map<string, Outcome>();
const lockOutcomes = new Map<string, TerraformResult>();

async function initWith(files: Record<string, string>, source: string): Promise<Outcome> {
  const work = await mkdtemp(join(mirror.dir, 'w-'));
  await writeTree(work, files);
  const result = await terraformInit(work, mirror);
  const entry = readLockFile(work).get(source);
  const type = source.split('/')[2] as string;
  const m = new RegExp(`- Finding hashicorp/${type} versions matching "([^"]*)"`).exec(result.output);
  return {
    result,
    version: entry?.version ?? null,
    constraints: entry?.constraints ?? null,
    matching: m === null ? null : (m[1] as string),
  };
}

function multiFiles(c: MultiCase): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [path, version] of Object.entries(c.modules)) {
    const children = Object.keys(c.modules).filter((p) => {
      if (p === '.' || p === path) return false;
      const parent = p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '.';
      return parent === path;
    });
    const calls = children
      .map(
        (child) =>
          `module ${hclQuoted(child.replace(/\//g, '_'))} {\n  source = "./${child.split('/').pop()}"\n}\n`,
      )
      .join('');
    const tf = requiredProvidersTf({
      fake: { source: 'hashicorp/fake', ...(version === undefined ? {} : { version }) },
    });
    files[path === '.' ? 'main.tf' : `${path}/main.tf`] = tf + calls;
  }
  return files;
}

describeWithTerraform('terraform init as the oracle for src/constraints', () => {
  beforeAll(async () => {
    mirror = await withMirror([
      ...FAKE_VERSIONS.map((version) => ({ source: 'hashicorp/fake', version })),
      ...QUIRK_VERSIONS.map((version) => ({ source: 'hashicorp/quirk', version })),
    ]);
    const fakeTf = (c: string): Record<string, string> => ({
      'main.tf': requiredProvidersTf({ fake: { source: 'hashicorp/fake', version: c } }),
    });
    const quirkTf = (c: string): Record<string, string> => ({
      'main.tf': requiredProvidersTf({ quirk: { source: 'hashicorp/quirk', version: c } }),
    });
    type Job = () => Promise<void>;
    const jobs: Job[] = [
      ...FAKE_CASES.map((c) => async () => void fakeOutcomes.set(c, await initWith(fakeTf(c), FAKE))),
      ...QUIRK_CASES.map((c) => async () => void quirkOutcomes.set(c, await initWith(quirkTf(c), QUIRK))),
      ...MULTI_CASES.map(
        (c) => async () => void multiOutcomes.set(c.name, await initWith(multiFiles(c), FAKE)),
      ),
    ];
    // A valid lock file to vary: `~> 1.0` selects 1.2.0.
    const base = await mkdtemp(join(mirror.dir, 'lock-'));
    await writeTree(base, fakeTf('~> 1.0'));
    const baseInit = await terraformInit(base, mirror);
    if (baseInit.code !== 0) throw new Error(`base init failed:\n${baseInit.output}`);
    const baseLock = await readFile(join(base, '.terraform.lock.hcl'), 'utf8');
    for (const candidate of LOCK_CANDIDATES) {
      jobs.push(async () => {
        const work = await mkdtemp(join(mirror.dir, 'l-'));
        await writeTree(work, fakeTf('~> 1.0'));
        const line = /constraints = "~> 1\.0"/;
        if (!line.test(baseLock)) throw new Error(`unexpected lock file written by terraform:\n${baseLock}`);
        const lock = baseLock.replace(line, `constraints = ${hclQuoted(candidate)}`);
        await writeFile(join(work, '.terraform.lock.hcl'), lock);
        lockOutcomes.set(candidate, await terraformInit(work, mirror, ['-lockfile=readonly']));
      });
    }
    await mapLimit(jobs, 2, (job) => job());
  }, 120_000);

  afterAll(async () => {
    if (mirror !== undefined) await mirror.cleanup();
  });

  function expectLikeTerraform(c: string, constraints: string[], versions: string[], out: Outcome): void {
    const detail = `constraints ${JSON.stringify(constraints)}\n--- terraform output ---\n${out.result.output}`;
    const invalid = constraints.map(validateConstraints).find((e) => e !== null);
    if (invalid !== undefined) {
      expect({
        code: out.result.code,
        invalidDiag: /Invalid version constraint/.test(out.result.output),
        detail,
      }).toEqual({ code: 1, invalidDiag: true, detail });
      return;
    }
    const parsed = constraints.flatMap((s) => parseConstraints(s));
    const expectedVersion = maxSatisfying(versions, parsed);
    const normalized = normalizeConstraints(constraints);
    if (parsed.length > 0)
      expect({ matching: out.matching, detail }).toEqual({ matching: normalized, detail });
    if (expectedVersion === null) {
      expect({
        code: out.result.code,
        noMatch: /no available releases match the given constraints/.test(out.result.output),
        detail,
      }).toEqual({ code: 1, noMatch: true, detail });
      return;
    }
    expect({ code: out.result.code, version: out.version, constraints: out.constraints, detail }).toEqual({
      code: 0,
      version: expectedVersion,
      constraints: parsed.length > 0 ? normalized : null,
      detail,
    });
    expect(satisfies(expectedVersion, parsed)).toBe(true);
    if (parsed.length > 0) expect(isNormalized(normalized)).toBe(true);
    void c;
  }

  describe('terraform init agrees on single constraints (fake provider)', () => {
    test.each(FAKE_CASES.map((c) => [JSON.stringify(c), c]))('%s', (_label, c) => {
      const out = fakeOutcomes.get(c as string);
      if (out === undefined) throw new Error('no terraform outcome recorded');
      expectLikeTerraform(c as string, [c as string], FAKE_VERSIONS, out);
    });

    test('the case list covers valid, invalid, no-match and pre-release selections', () => {
      const invalid = FAKE_CASES.filter((c) => validateConstraints(c) !== null);
      const valid = FAKE_CASES.filter((c) => validateConstraints(c) === null);
      const noMatch = valid.filter((c) => maxSatisfying(FAKE_VERSIONS, c) === null);
      const pre = valid.filter((c) => (maxSatisfying(FAKE_VERSIONS, c) ?? '').includes('-'));
      expect(valid.length).toBeGreaterThanOrEqual(40);
      expect(invalid.length).toBeGreaterThanOrEqual(20);
      expect(noMatch.length).toBeGreaterThanOrEqual(5);
      expect(pre.length).toBeGreaterThanOrEqual(3);
    });
  });

  describe('terraform init agrees on go-versions pre-release ordering (quirk provider)', () => {
    test.each(QUIRK_CASES.map((c) => [c]))('%s', (c) => {
      const out = quirkOutcomes.get(c);
      if (out === undefined) throw new Error('no terraform outcome recorded');
      expectLikeTerraform(c, [c], QUIRK_VERSIONS, out);
    });
  });

  describe('terraform init agrees on several modules constraining one provider', () => {
    test.each(MULTI_CASES.map((c) => [c.name, c]))('%s', (_name, c) => {
      const mc = c as MultiCase;
      const out = multiOutcomes.get(mc.name);
      if (out === undefined) throw new Error('no terraform outcome recorded');
      const strings = Object.values(mc.modules).filter((v): v is string => v !== undefined);
      expectLikeTerraform(mc.name, strings, FAKE_VERSIONS, out);
      if (strings.every((s) => validateConstraints(s) === null)) {
        const conflict = findConflict(
          Object.entries(mc.modules).flatMap(([id, s]) => (s === undefined ? [] : [{ id, constraints: s }])),
        );
        // A theoretical conflict can never be resolved by any available version.
        if (conflict !== null) expect(out.result.code).toBe(1);
      }
    });
  });

  describe('terraform accepts exactly the normalized lock-file constraints', () => {
    test.each(LOCK_CANDIDATES.map((c) => [JSON.stringify(c), c]))('%s', (_label, c) => {
      const r = lockOutcomes.get(c as string);
      if (r === undefined) throw new Error('no terraform outcome recorded');
      const rejected = /Invalid provider version constraints/.test(r.output);
      expect({ accepted: r.code === 0 && !rejected, output: r.output }).toEqual({
        accepted: isNormalized(c as string),
        output: r.output,
      });
    });
  });

  describe('test/support/terraform.ts', () => {
    test('mirrors packed and unpacked packages from any host and reads the lock file back', async () => {
      await mirror.add([
        { source: 'hashicorp/unpacked', version: '1.0.0', layout: 'unpacked' },
        { source: 'example.com/acme/thing', version: '0.1.0' },
      ]);
      const work = await mkdtemp(join(mirror.dir, 'h-'));
      await writeTree(work, {
        'main.tf': requiredProvidersTf({
          unpacked: { source: 'hashicorp/unpacked', version: '~> 1.0' },
          thing: { source: 'example.com/acme/thing' },
        }),
      });
      const r = await terraformInit(work, mirror);
      expect({ code: r.code, output: r.output }).toEqual({ code: 0, output: r.output });
      const lock = readLockFile(work);
      expect(lock.get('registry.terraform.io/hashicorp/unpacked')).toEqual({
        version: '1.0.0',
        constraints: '~> 1.0',
        hashes: [expect.stringMatching(/^h1:[A-Za-z0-9+/]{43}=$/)],
      });
      expect(lock.get('example.com/acme/thing')).toMatchObject({ version: '0.1.0', constraints: null });
    });

    test("hclQuoted (the lock writer's escaper) round-trips awkward text through terraform", async () => {
      const work = await mkdtemp(join(mirror.dir, 'q-'));
      const text = 'a "quoted" \\ back\tslash ${not} %{interp} $${kept} \u0001 ünïcode\nline';
      await writeTree(work, { 'main.tf': `locals {\n  x = ${hclQuoted(text)}\n}\n` });
      const r = await runTerraform(['console', '-no-color'], work, mirror.env, {
        input: 'jsonencode(local.x)\n',
      });
      expect({ code: r.code, output: r.output }).toEqual({ code: 0, output: r.output });
      const printed = r.stdout.trim().split('\n').pop() as string;
      expect(JSON.parse(JSON.parse(printed) as string)).toBe(text);
    });
  });
});
