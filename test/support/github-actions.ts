/**
 * Just enough of the GitHub Actions runner to run this repository's composite action (action.yml)
 * and to evaluate the conditions of the workflow examples, without GitHub:
 *
 * - expressions `${{ … }}`: contexts (`inputs`, `github`, `steps`, `env`, `vars`, `secrets`),
 *   property access (`a.b-c.d`, `a['b']`), string/number/boolean/null literals, `==` `!=` (strings
 *   compared case-insensitively, as GitHub does), `!`, `&&`, `||` (returning operands, as GitHub
 *   does), parentheses and the status functions `always()`, `success()`, `failure()`, `cancelled()`;
 *   a step condition without a status function means `success() && (…)`;
 * - a composite action's steps: `run` steps in bash (`bash --noprofile --norc -eo pipefail`, as the
 *   runner runs `shell: bash`) with GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, step outputs
 *   parsed (`name=value` and `name<<DELIMITER` forms), `env` interpolated; `uses` steps are recorded
 *   with their interpolated `with`, not run.
 *
 * Anything else in an expression (other functions, filters) throws, so an unsupported construct in
 * the action fails the test instead of being misread.
 *
 * `checkoutSample` gives the workspace: a git repository holding the sample configuration.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EVENTS_DIR } from './lambda';

const exec = promisify(execFile);

/** A checked-out repository at `dir` (created): the sample configuration
 * (events/archives/acme-network.tar.gz) extracted and committed. Returns `dir`. */
export async function checkoutSample(dir: string): Promise<string> {
  await mkdir(dir);
  await exec('tar', ['-xzf', join(EVENTS_DIR, 'archives', 'acme-network.tar.gz'), '-C', dir]);
  const git = (...args: string[]) =>
    exec('git', ['-c', 'user.name=ci', '-c', 'user.email=ci@example.com', ...args], { cwd: dir });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'configuration');
  return dir;
}

export type Value = string | number | boolean | null | undefined | { [key: string]: Value } | Value[];
export interface Contexts {
  [name: string]: Value;
}

type Token =
  | { kind: 'str'; value: string }
  | { kind: 'num'; value: number }
  | { kind: 'ident'; value: string }
  | { kind: 'op'; value: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= source.length) throw new Error(`unterminated string in ${source}`);
        if (source[i] === "'" && source[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (source[i] === "'") {
          i++;
          break;
        } else value += source[i++];
      }
      tokens.push({ kind: 'str', value });
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(source.slice(i))![0];
      tokens.push({ kind: 'num', value: Number(m) });
      i += m.length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(source.slice(i))![0];
      tokens.push({ kind: 'ident', value: m });
      i += m.length;
    } else {
      const two = source.slice(i, i + 2);
      if (['==', '!=', '&&', '||'].includes(two)) {
        tokens.push({ kind: 'op', value: two });
        i += 2;
      } else if ('!().[]'.includes(c)) {
        tokens.push({ kind: 'op', value: c });
        i++;
      } else throw new Error(`unsupported character ${JSON.stringify(c)} in expression ${source}`);
    }
  }
  return tokens;
}

export interface StatusState {
  /** Whether an earlier step failed. */
  failed: boolean;
}

function toNumber(v: Value): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string')
    return v.trim() === '' ? 0 : /^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*$/.test(v) ? Number(v) : NaN;
  return NaN;
}

/** GitHub's `==`: same types compare directly (strings ignoring case); otherwise both sides are
 * coerced to numbers (null and '' are 0, so `null == '0'` is true, a classic trap). */
function looseEqual(a: Value, b: Value): boolean {
  const x = a ?? null;
  const y = b ?? null;
  const object = (v: Value) => v !== null && typeof v === 'object';
  if (object(x) || object(y)) return x === y;
  if (typeof x === typeof y) {
    return typeof x === 'string' ? x.toLowerCase() === (y as string).toLowerCase() : x === y;
  }
  return toNumber(x) === toNumber(y);
}

/** Evaluates one expression (the text inside `${{ }}`). */
export function evaluate(source: string, contexts: Contexts, status: StatusState = { failed: false }): Value {
  const tokens = tokenize(source);
  let pos = 0;
  const peek = () => tokens[pos];
  const isOp = (v: string) => peek()?.kind === 'op' && peek()!.value === v;
  const expectOp = (v: string) => {
    if (!isOp(v)) throw new Error(`expected ${v} in ${source}`);
    pos++;
  };
  const truthy = (v: Value) => !(v === '' || v === 0 || v === false || v === null || v === undefined);

  function primary(): Value {
    const t = peek();
    if (t === undefined) throw new Error(`unexpected end of ${source}`);
    pos++;
    if (t.kind === 'str' || t.kind === 'num') return t.value;
    if (t.kind === 'op' && t.value === '(') {
      const v = or();
      expectOp(')');
      return v;
    }
    if (t.kind === 'op' && t.value === '!') return !truthy(primary());
    if (t.kind !== 'ident') throw new Error(`unexpected ${t.value} in ${source}`);
    if (t.value === 'true') return true;
    if (t.value === 'false') return false;
    if (t.value === 'null') return null;
    if (isOp('(')) {
      pos++;
      expectOp(')');
      switch (t.value) {
        case 'always':
          return true;
        case 'success':
          return !status.failed;
        case 'failure':
          return status.failed;
        case 'cancelled':
          return false;
        default:
          throw new Error(`unsupported function ${t.value}() in ${source}`);
      }
    }
    if (!(t.value in contexts)) throw new Error(`unknown context ${t.value} in ${source}`);
    let value: Value = contexts[t.value];
    for (;;) {
      let key: string;
      if (isOp('.')) {
        pos++;
        const name = peek();
        if (name?.kind !== 'ident') throw new Error(`expected a property name in ${source}`);
        pos++;
        key = name.value;
      } else if (isOp('[')) {
        pos++;
        const k = primary();
        expectOp(']');
        key = String(k);
      } else break;
      value = value !== null && typeof value === 'object' && !Array.isArray(value) ? value[key] : undefined;
    }
    return value ?? null;
  }
  function comparison(): Value {
    let left = primary();
    while (isOp('==') || isOp('!=')) {
      const op = tokens[pos++]!.value;
      const right = primary();
      const equal = looseEqual(left, right);
      left = op === '==' ? equal : !equal;
    }
    return left;
  }
  function and(): Value {
    let left = comparison();
    while (isOp('&&')) {
      pos++;
      const right = comparison();
      left = truthy(left) ? right : left;
    }
    return left;
  }
  function or(): Value {
    let left = and();
    while (isOp('||')) {
      pos++;
      const right = and();
      left = truthy(left) ? left : right;
    }
    return left;
  }
  const result = or();
  if (pos !== tokens.length) throw new Error(`unexpected ${tokens[pos]!.value} in ${source}`);
  return result;
}

/** Replaces every `${{ expr }}` in `text` with the expression's value as a string. */
export function interpolate(text: string, contexts: Contexts, status?: StatusState): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_m, expr: string) => {
    const v = evaluate(expr, contexts, status);
    return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
}

/** A step or job `if:`: with no status function in it, GitHub prepends `success() &&`. */
export function condition(
  text: string | boolean | undefined,
  contexts: Contexts,
  status: StatusState,
): boolean {
  if (text === undefined) return !status.failed;
  const source = String(text)
    .trim()
    .replace(/^\$\{\{([\s\S]*)\}\}$/, '$1');
  const withStatus = /\b(always|success|failure|cancelled)\(\)/.test(source)
    ? source
    : `success() && (${source})`;
  const v = evaluate(withStatus, contexts, status);
  return !(v === '' || v === 0 || v === false || v === null || v === undefined);
}

export interface ActionStep {
  id?: string;
  name?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string | number | boolean>;
  run?: string;
  shell?: string;
  env?: Record<string, string | number | boolean>;
}

export interface ActionDefinition {
  name: string;
  description: string;
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs?: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

export interface StepResult {
  id: string | undefined;
  name: string | undefined;
  ran: boolean;
  uses?: string;
  with?: Record<string, string>;
  exitCode?: number;
  stdout?: string;
  stderr?: string;
  outputs: Record<string, string>;
}

export interface ActionRun {
  steps: StepResult[];
  failed: boolean;
  outputs: Record<string, string>;
  summary: string;
}

function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i]!);
      outputs[heredoc[1]!] = body.join('\n');
    } else if (line.includes('=')) {
      outputs[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return outputs;
}

function bash(
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/**
 * Runs a composite action's steps as the runner would: `with` gives the inputs (defaults applied,
 * themselves expressions), `github` the github context, `env` the job's environment (PATH,
 * credentials, the GITHUB_* variables), `workspace` the working directory.
 */
export async function runCompositeAction(
  action: ActionDefinition,
  options: {
    with: Record<string, string>;
    github: { [key: string]: Value };
    env: Record<string, string>;
    workspace: string;
    /** Emulates a `uses` step (e.g. the SARIF upload); default: recorded only. */
    onUses?: (step: StepResult) => Promise<void> | void;
  },
): Promise<ActionRun> {
  const scratch = await mkdtemp(join(tmpdir(), 'tfguard-action-'));
  try {
    const baseContexts: Contexts = { github: options.github, env: options.env, vars: {}, secrets: {} };
    const inputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(action.inputs)) {
      const given = options.with[name];
      if (given !== undefined) inputs[name] = given;
      else if (spec.default !== undefined) inputs[name] = interpolate(String(spec.default), baseContexts);
      else if (spec.required) throw new Error(`input ${name} is required`);
      else inputs[name] = '';
    }
    for (const name of Object.keys(options.with)) {
      if (!(name in action.inputs)) throw new Error(`the action has no input ${name}`);
    }
    const steps: Record<string, { outputs: Record<string, string>; outcome: string }> = {};
    const status: StatusState = { failed: false };
    const results: StepResult[] = [];
    const summaryFile = join(scratch, 'summary.md');
    await writeFile(summaryFile, '');
    let n = 0;
    for (const step of action.runs.steps) {
      n++;
      const contexts: Contexts = { ...baseContexts, inputs, steps };
      const result: StepResult = { id: step.id, name: step.name, ran: false, outputs: {} };
      results.push(result);
      if (!condition(step.if, contexts, status)) continue;
      result.ran = true;
      if (step.uses !== undefined) {
        result.uses = step.uses;
        result.with = Object.fromEntries(
          Object.entries(step.with ?? {}).map(([k, v]) => [k, interpolate(String(v), contexts, status)]),
        );
        await options.onUses?.(result);
        if (step.id) steps[step.id] = { outputs: {}, outcome: 'success' };
        continue;
      }
      if (step.shell !== 'bash') throw new Error(`step ${n}: composite run steps here use shell: bash`);
      const outputFile = join(scratch, `output-${n}`);
      await writeFile(outputFile, '');
      const env: NodeJS.ProcessEnv = {
        ...options.env,
        GITHUB_OUTPUT: outputFile,
        GITHUB_STEP_SUMMARY: summaryFile,
      };
      for (const [k, v] of Object.entries(step.env ?? {})) env[k] = interpolate(String(v), contexts, status);
      const r = await bash(interpolate(step.run ?? '', contexts, status), { cwd: options.workspace, env });
      Object.assign(result, { exitCode: r.code, stdout: r.stdout, stderr: r.stderr });
      result.outputs = parseOutputs(await readFile(outputFile, 'utf8'));
      if (step.id)
        steps[step.id] = { outputs: result.outputs, outcome: r.code === 0 ? 'success' : 'failure' };
      if (r.code !== 0) status.failed = true;
    }
    const contexts: Contexts = { ...baseContexts, inputs, steps };
    const outputs = Object.fromEntries(
      Object.entries(action.outputs ?? {}).map(([k, v]) => [k, interpolate(v.value, contexts, status)]),
    );
    return { steps: results, failed: status.failed, outputs, summary: await readFile(summaryFile, 'utf8') };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
