/**
 * The one table of settings (src/scan/settings.ts, src/config.ts, src/service/settings.ts): the
 * parser, the defaults, the messages and the documentation all come from it, so these tests check
 * the table against the real parser and against the code that reads each setting.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { OPERATOR_SETTINGS, STAGE_SETTING } from '../../src/config';
import { HclParser } from '../../src/hcl';
import { RULES } from '../../src/rules';
import { DEFAULT_CONFIG, parseConfigFile } from '../../src/scan/config-file';
import { CONFIG_SETTINGS, defaultConfig, settingsSample } from '../../src/scan/settings';
import { SERVICE_SETTINGS } from '../../src/service/settings';
import type { SettingSpec } from '../../src/util/settings';

const ROOT = path.resolve(__dirname, '../..');
const KNOWN_RULES = new Set(RULES.map((r) => r.id));
let parser: HclParser;

beforeAll(() => {
  parser = new HclParser({ workers: 1 });
});
afterAll(async () => {
  await parser.close();
});

async function parse(text: string, fromArchive: boolean) {
  const result = await parser.parse('.tfguard.hcl', Buffer.from(text));
  return parseConfigFile('.tfguard.hcl', result, KNOWN_RULES, { fromArchive });
}

/** A value of another type than the setting's: what a typo or a misunderstanding writes. */
function wrongValue(spec: SettingSpec): string {
  const d = spec.default ?? {};
  if (Array.isArray(d)) return '"not-a-list"';
  if (typeof d === 'boolean') return '"yes"';
  if (typeof d === 'string') return '["a"]';
  return '["not-a-map"]';
}

describe('the settings table', () => {
  it('the README sample parses with the real parser, as --config, to exactly its examples', async () => {
    const sample = settingsSample()
      .replace(/^```hcl\n/, '')
      .replace(/```$/, '');
    const layer = await parse(sample, false);
    for (const spec of CONFIG_SETTINGS) {
      const example = await parser.parse('x.hcl', Buffer.from(`v = ${spec.example ?? ''}\n`));
      if (!example.ok) throw new Error(`example of ${spec.key} does not parse`);
      const raw = example.file.body.attributes[0]?.value;
      expect([spec.key, (layer as Record<string, unknown>)[spec.field]]).toEqual([
        spec.key,
        spec.type.fromValue(raw, spec.key),
      ]);
    }
    expect(layer.rules).toEqual({ 'root-module-unbounded': { severity: 'warning' } });
    expect(Object.keys(layer.credentials ?? {})).toEqual(['app.terraform.io']);
  });

  it('a scanned archive may not set what only whoever runs the scan may set', async () => {
    for (const spec of CONFIG_SETTINGS.filter((s) => !s.origins.includes('repository'))) {
      await expect(parse(`\n${spec.key} = ${spec.example ?? ''}\n`, true)).rejects.toMatchObject({
        code: 'invalid-config',
        message: expect.stringMatching(
          new RegExp(`^\\.tfguard\\.hcl:2: "${spec.key}" .*not the scanned archive`),
        ),
      });
    }
  });

  it.each(CONFIG_SETTINGS.map((s) => [s.key, s] as const))(
    '%s: a value of the wrong type is rejected with file, line and the setting named',
    async (key, spec) => {
      await expect(parse(`\n\n${key} = ${wrongValue(spec)}\n`, false)).rejects.toMatchObject({
        code: 'invalid-config',
        message: expect.stringMatching(new RegExp(`^\\.tfguard\\.hcl:3: .*${key}`)),
      });
    },
  );

  it("the defaults are the table's, and each scan gets its own copy", () => {
    for (const spec of CONFIG_SETTINGS) {
      expect([spec.key, (DEFAULT_CONFIG as unknown as Record<string, unknown>)[spec.field]]).toEqual([
        spec.key,
        spec.default,
      ]);
    }
    const a = defaultConfig();
    a.roots.push('x');
    expect(defaultConfig().roots).toEqual([]);
  });

  it('an unknown setting names every setting of the table', async () => {
    const err = (await parse('rootz = []\n', false).catch((e: unknown) => e)) as Error;
    for (const spec of CONFIG_SETTINGS) expect(err.message).toContain(spec.key);
  });

  it("a rule's own setting is declared on that rule, which reads it", async () => {
    const declared = RULES.flatMap((r) => (r.options ?? []).map((o) => [r.id, o] as const));
    expect(declared.map(([, o]) => o.key).sort()).toEqual(['module_ref_policy', 'module_version_style']);
    for (const [id, option] of declared) {
      const source = await fs.readFile(path.join(ROOT, 'src/rules', `${id}.ts`), 'utf8');
      expect([id, source.includes(`config.${option.field}`)]).toEqual([id, true]);
      // ...and no other rule reads it.
      for (const other of RULES.filter((r) => r.id !== id)) {
        const text = await fs.readFile(path.join(ROOT, 'src/rules', `${other.id}.ts`), 'utf8');
        expect([other.id, text.includes(`config.${option.field}`)]).toEqual([other.id, false]);
      }
    }
  });

  it('every TFGUARD_ variable the code names is declared in one table, once', async () => {
    const declared = [
      ...OPERATOR_SETTINGS,
      STAGE_SETTING,
      ...Object.values(SERVICE_SETTINGS),
      ...CONFIG_SETTINGS.filter(
        (s) => s.env !== undefined && !Object.values(SERVICE_SETTINGS).some((v) => v.env === s.env),
      ),
    ].map((s) => s.env as string);
    expect(new Set(declared).size).toBe(declared.length);
    const named = new Set<string>();
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.name.endsWith('.ts')) {
          const text = await fs.readFile(full, 'utf8');
          // A whole variable name (not a family like TFGUARD_REMOTE_* nor the build's define).
          for (const m of text.matchAll(/(?<![_\w])TFGUARD_[A-Z0-9_]*[A-Z0-9](?![_\w*])/g)) named.add(m[0]);
        }
      }
    };
    await walk(path.join(ROOT, 'src'));
    await walk(path.join(ROOT, 'handlers'));
    const undeclared = [...named].filter((n) => !declared.includes(n) && n !== 'TFGUARD_X');
    expect(undeclared).toEqual([]);
  });
});
