/**
 * The YAML reader of the declaration files (src/modules/declarations/yaml.ts): lines of mappings
 * and keys, syntax errors as results with their line, never exceptions.
 */
import { parseYaml, staticString } from '../../src/modules/declarations/yaml';

describe('parseYaml', () => {
  it('maps each mapping and sequence to its first line, and keys to theirs', () => {
    const r = parseYaml(
      [
        '# comment',
        'version: 3',
        'projects:',
        '  - name: a',
        '    dir: x',
        '',
        '  - dir: "y"',
        '    name: b',
      ].join('\r\n'),
    );
    if (!r.ok) throw new Error(r.message);
    const projects = (r.doc.value as { projects: unknown[] }).projects;
    expect(projects.map((p) => r.doc.lineOf(p))).toEqual([4, 7]);
    expect(r.doc.keyLine(projects[0], 'dir', r.doc.lineOf(projects[1]))).toBe(5);
    expect(r.doc.keyLine(projects[1], 'dir')).toBe(7);
    // A key the mapping does not have: the mapping's own line.
    expect(r.doc.keyLine(projects[0], 'workspace', 7)).toBe(4);
  });

  it('a syntax error is a result with its line', () => {
    const r = parseYaml('a: 1\nb: [1, 2\nc: 3\n');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.line).toBeGreaterThanOrEqual(2);
    expect(r.message).not.toBe('');
  });

  it('custom tags are errors (atmos.ts strips its own first); a repeated key keeps the last value', () => {
    expect(parseYaml('a: !custom x\n').ok).toBe(false);
    expect(parseYaml('a: 1\na: 2\n').ok).toBe(true); // `json: true`: the last value wins
  });
});

test('staticString: plain strings only, not interpolations or templates', () => {
  expect(staticString('envs/prod')).toBe('envs/prod');
  expect(staticString('${var.dir}')).toBeNull();
  expect(staticString('{{ .stage }}/vpc')).toBeNull();
  expect(staticString('')).toBeNull();
  expect(staticString(3)).toBeNull();
});
