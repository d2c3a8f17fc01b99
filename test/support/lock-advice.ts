/**
 * The advice in the lock rules' notes, checked with terraform 1.11 itself (offline: fake providers
 * in a filesystem mirror). `describeLockAdvice(rule, rows)` is used by each lock rule's test file
 * (`test/rules/<rule-id>.test.ts`). For each row, terraform writes a lock file for the `initial`
 * configuration; the configuration then changes to `changed`, and tfguard's full scan must report
 * the rule once. The commands the note names are taken out of the note text and run, in the row's
 * order, against a working directory with those files; after each one the test checks what the note
 * claims it does:
 *
 * - `fixes`: it succeeds, the rescan of the directory has no lock finding left,
 *   `init -lockfile=readonly` accepts the lock file, and (lock-constraints-drift) the line terraform
 *   writes equals tfguard's `fix.replacement`;
 * - `unchanged`: it succeeds and leaves the lock file byte for byte as it was;
 * - `fails`: it fails and leaves the lock file as it was;
 * - `still-reported`: it succeeds and the rule still reports the directory.
 *
 * So a note that advises a command which does not repair the finding (such as plain
 * `terraform init` for drifted constraints) fails the test, and so does a claim about another
 * command that terraform does not bear out. `controls` are commands the notes do not name, run to
 * record terraform's behaviour the rule documentation describes (docs/rules/lock-constraints-drift.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Finding } from '../../src/rules';
import type { FileMap } from './archive';
import { describeWithTerraform } from './external';
import { scanFiles } from './scan';
import {
  currentPlatform,
  mapLimit,
  readLockFile,
  readTree,
  runTerraform,
  withMirror,
  writeTree,
  writeZip,
  type Mirror,
  type TerraformResult,
} from './terraform';
import { lines } from './rule-table';

export const PLATFORM = currentPlatform();
export const OTHER_PLATFORM = PLATFORM === 'darwin_arm64' ? 'linux_amd64' : 'darwin_arm64';
const FAKE = 'registry.terraform.io/hashicorp/fake';
const L = '.terraform.lock.hcl';

export type AdviceExpect = 'fixes' | 'unchanged' | 'fails' | 'still-reported';

export interface AdviceStep {
  /** Where the note names the command (first capture group); or a fixed command (a control). */
  from: RegExp | { control: string };
  expect: AdviceExpect;
}

export interface AdviceRow {
  name: string;
  /** The configuration terraform writes the lock file for (null: no lock file). */
  initial: FileMap | null;
  /** An edit of the lock file terraform wrote, before the scan. */
  editLock?: (lock: string) => string;
  /** The configuration scanned and handed to the commands, with that lock file. */
  changed: FileMap;
  /** Settings (.tfguard.hcl) for the scan. */
  settings?: string;
  /** `implied`: no provider_installation block, so terraform installs from the root's own
   * terraform.d/plugins (the packages are in `initial`/`changed`); default: the test mirror. */
  installation?: 'mirror' | 'implied';
  steps: AdviceStep[];
}

export interface StepOutcome {
  command: string;
  expect: AdviceExpect;
  /** Whatever contradicts the expectation; [] when terraform bore the note out. */
  problems: string[];
}

export interface AdviceResult {
  row: AdviceRow;
  note: string;
  outcomes: StepOutcome[];
}

/** The note's usual form: `Run "<command>" ...`. */
export const RUN = /^Run "([^"]+)"/;

/** `required_providers` with hashicorp/<name> (default `fake`), with or without a version. */
export const rp = (version: string | null, name = 'fake'): string =>
  lines(
    'terraform {',
    '  required_providers {',
    `    ${name} = { source = "hashicorp/${name}"${version === null ? '' : `, version = "${version}"`} }`,
    '  }',
    '}',
  );

/** A call of module `name` at `source`. */
export const call = (name: string, source: string): string =>
  lines(`module "${name}" {`, `  source = "${source}"`, '}');

/** A packed package for the root's terraform.d/plugins; `marker` changes its content. */
export function pluginZip(version: string, marker: string): FileMap {
  return {
    [`terraform.d/plugins/registry.terraform.io/hashicorp/fake/terraform-provider-fake_${version}_${PLATFORM}.zip`]:
      writeZip([
        {
          name: `terraform-provider-fake_v${version}`,
          data: `#!/bin/sh\n# ${marker}\nexit 1\n`,
          mode: 0o755,
        },
      ]),
  };
}

interface Oracle {
  mirror: Mirror;
  impliedEnv: Record<string, string>;
}

async function startOracle(): Promise<Oracle> {
  const versions = ['1.0.0', '1.2.0', '2.0.0'];
  const mirror = await withMirror([
    ...versions.map((version) => ({ source: 'hashicorp/fake', version })),
    // Another build for the other platform (same content would give the same h1:).
    ...versions.map((version) => ({
      source: 'hashicorp/fake',
      version,
      platform: OTHER_PLATFORM,
      files: [
        {
          name: `terraform-provider-fake_v${version}`,
          data: `#!/bin/sh\n# ${OTHER_PLATFORM}\nexit 1\n`,
          mode: 0o755,
        },
      ],
    })),
    { source: 'hashicorp/other', version: '1.0.0' },
  ]);
  const cli = join(mirror.dir, 'implied.tfrc');
  await writeFile(cli, '# implied provider installation: terraform.d/plugins of the working directory\n');
  const impliedEnv = {
    TF_CLI_CONFIG_FILE: cli,
    HOME: join(mirror.dir, 'home'),
    XDG_DATA_HOME: join(mirror.dir, 'xdg'),
  };
  return { mirror, impliedEnv };
}

function envOf(oracle: Oracle, row: AdviceRow): Record<string, string> {
  return row.installation === 'implied' ? oracle.impliedEnv : oracle.mirror.env;
}

/**
 * Runs a command as a note names it. Only what a test cannot leave to the user's environment is
 * added: no backend, no prompts, and for `providers lock` (which ignores the CLI configuration and
 * would ask the origin registry) the test mirror; `-platform=...` is the note's placeholder for
 * "your platforms" and becomes this machine's platform.
 */
function runAdvised(
  oracle: Oracle,
  command: string,
  cwd: string,
  env: Record<string, string>,
): Promise<TerraformResult> {
  const [program, ...args] = command.split(/\s+/);
  if (program !== 'terraform') throw new Error(`the note names "${command}", not a terraform command`);
  const expanded = args.map((a) => (a === '-platform=...' ? `-platform=${PLATFORM}` : a));
  if (expanded.some((a) => a.includes('...'))) throw new Error(`"${command}" cannot be run as written`);
  if (expanded[0] === 'init') {
    return runTerraform([...expanded, '-backend=false', '-input=false', '-no-color'], cwd, env);
  }
  if (expanded[0] === 'providers' && expanded[1] === 'lock') {
    const mirrorArg = expanded.some((a) => a.startsWith('-fs-mirror='))
      ? []
      : [`-fs-mirror=${oracle.mirror.mirrorDir}`];
    return runTerraform([...expanded, ...mirrorArg, '-no-color'], cwd, env);
  }
  throw new Error(`unexpected command in a note: "${command}"`);
}

const lockFindings = (findings: Finding[]): string[] =>
  findings.filter((f) => f.ruleId.startsWith('lock-')).map((f) => `${f.ruleId}: ${f.message}`);

function lockTextOf(dir: string): string | null {
  const p = join(dir, L);
  return existsSync(p) ? readFileSync(p, 'utf8') : null;
}

async function runRow(
  oracle: Oracle,
  rule: string,
  row: AdviceRow,
  index: number,
): Promise<{ note: string; outcomes: StepOutcome[] }> {
  const base = join(oracle.mirror.dir, `row-${index}`);
  const env = envOf(oracle, row);
  let lock: string | null = null;
  if (row.initial !== null) {
    const first = join(base, 'initial');
    await mkdir(first, { recursive: true });
    await writeTree(first, row.initial);
    const r = await runTerraform(['init', '-backend=false', '-input=false', '-no-color'], first, env);
    if (r.code !== 0)
      throw new Error(`${row.name}: terraform init of the initial configuration failed:\n${r.output}`);
    lock = lockTextOf(first);
    if (lock === null) throw new Error(`${row.name}: terraform wrote no lock file`);
    lock = row.editLock?.(lock) ?? lock;
  }
  const files: FileMap = { ...row.changed, ...(lock === null ? {} : { [L]: lock }) };
  const settings = row.settings === undefined ? {} : { config: row.settings };
  const before = await scanFiles(files, settings);
  const found = before.findings.filter((f) => f.ruleId === rule);
  if (found.length !== 1) {
    throw new Error(
      `${row.name}: expected one ${rule} finding, got:\n${lockFindings(before.findings).join('\n')}`,
    );
  }
  const finding = found[0] as Finding;
  const note = finding.note ?? '';

  const work = join(base, 'work');
  await mkdir(work, { recursive: true });
  await writeTree(work, files);
  const outcomes: StepOutcome[] = [];
  for (const step of row.steps) {
    const command = 'control' in step.from ? step.from.control : step.from.exec(note)?.[1];
    if (command === undefined) {
      outcomes.push({
        command: String(step.from),
        expect: step.expect,
        problems: ['the note names no such command'],
      });
      continue;
    }
    const lockBefore = lockTextOf(work);
    const r = await runAdvised(oracle, command, work, env);
    const lockAfter = lockTextOf(work);
    const problems: string[] = [];
    if (step.expect === 'fails') {
      if (r.code === 0) problems.push('succeeded');
      if (lockAfter !== lockBefore) problems.push('changed the lock file');
    } else if (r.code !== 0) {
      problems.push(`failed:\n${r.output}`);
    } else if (step.expect === 'unchanged') {
      if (lockAfter !== lockBefore) problems.push(`changed the lock file:\n${lockBefore}\n→\n${lockAfter}`);
    } else {
      const after = await scanFiles(
        await readTree(work, (name, parent) => parent === '' && name === '.terraform'),
        settings,
      );
      if (step.expect === 'still-reported') {
        if (!after.findings.some((f) => f.ruleId === rule)) problems.push(`${rule} is no longer reported`);
      } else {
        const left = lockFindings(after.findings);
        if (left.length > 0) problems.push(`lock findings left:\n${left.join('\n')}`);
        const readonly = await runTerraform(
          ['init', '-backend=false', '-input=false', '-no-color', '-lockfile=readonly'],
          work,
          env,
        );
        if (readonly.code !== 0)
          problems.push(`init -lockfile=readonly fails afterwards:\n${readonly.output}`);
        if (finding.fix !== undefined) {
          const written = readLockFile(work).get(FAKE)?.constraints ?? '';
          if (written !== finding.fix.replacement) {
            problems.push(
              `terraform wrote constraints "${written}", tfguard's fix says "${finding.fix.replacement}"`,
            );
          }
        }
      }
    }
    outcomes.push({ command, expect: step.expect, problems });
  }
  await rm(base, { recursive: true, force: true });
  return { note, outcomes };
}

/**
 * One test per row, in a block that needs terraform (`describeWithTerraform`); `more` adds tests
 * over all the rows' results.
 */
export function describeLockAdvice(
  rule: string,
  rows: AdviceRow[],
  more?: (results: () => AdviceResult[]) => void,
): void {
  describeWithTerraform(`${rule}: the commands its notes name do what the notes say (terraform 1.11)`, () => {
    let oracle: Oracle | undefined;
    let results: AdviceResult[] = [];

    beforeAll(async () => {
      const o = await startOracle();
      oracle = o;
      results = await mapLimit(rows, 3, async (row, i) => ({ row, ...(await runRow(o, rule, row, i)) }));
    }, 240_000);

    afterAll(async () => {
      await oracle?.mirror.cleanup();
    });

    it.each(rows.map((r) => [r.name] as const))('%s', (name) => {
      const result = results.find((r) => r.row.name === name);
      expect(result).toBeDefined();
      const failures = (result?.outcomes ?? [])
        .filter((o) => o.problems.length > 0)
        .map((o) => ({ command: o.command, expected: o.expect, problems: o.problems }));
      expect({ note: result?.note, failures }).toEqual({ note: result?.note, failures: [] });
    });

    more?.(() => results);
  });
}
