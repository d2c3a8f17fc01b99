import { matchGlob, selectConfigFiles } from '../../src/modules';

describe('matchGlob', () => {
  test.each([
    ['envs/*', 'envs/prod', true],
    ['envs/*', 'envs/prod/eu', false],
    ['envs/*', 'envs', false],
    ['envs/**', 'envs', true],
    ['envs/**', 'envs/prod/eu', true],
    ['**', '.', true],
    ['**', 'a/b/c', true],
    ['.', '.', true],
    ['.', 'a', false],
    ['./live/*', 'live/x', true],
    ['live/*/', 'live/x', true],
    ['**/modules/**', 'modules', true],
    ['**/modules/**', 'a/modules/b/c', true],
    ['**/modules/**', 'a/module/b', false],
    ['modules/?', 'modules/a', true],
    ['modules/?', 'modules/ab', false],
    ['a*c', 'abbbc', true],
    ['a*c', 'a/c', false],
    ['a.c', 'abc', false],
    ['a+b', 'a+b', true],
    ['stacks/**/prod', 'stacks/prod', true],
    ['stacks/**/prod', 'stacks/eu/west/prod', true],
    ['stacks/**/prod', 'stacks/eu/west/dev', false],
  ])('%s ~ %s → %s', (pattern, path, expected) => {
    expect(matchGlob(pattern, path)).toBe(expected);
  });
});

describe('selectConfigFiles', () => {
  const files = [
    'm/main.tf',
    'm/.hidden.tf',
    'm/main.tf~',
    'm/#main.tf#',
    'm/.#main.tf',
    'm/vars.tf.json',
    'm/z_override.tf',
    'm/override.tf.json',
    'm/a_override.tf',
    'm/net.tofu',
    'm/net.tf',
    'm/data.tofu.json',
    'm/data.tf.json',
    'm/data.tf',
    'm/README.md',
    'm/.terraform.lock.hcl',
    'm/terraform.tfvars',
    'm/x_override.tofu',
  ];

  test('terraform reads .tf and .tf.json only, ignores editor leftovers, finds overrides', () => {
    const s = selectConfigFiles(files, 'terraform');
    expect(s.selected).toEqual([
      'm/a_override.tf',
      'm/data.tf',
      'm/data.tf.json',
      'm/main.tf',
      'm/net.tf',
      'm/override.tf.json',
      'm/vars.tf.json',
      'm/z_override.tf',
    ]);
    expect(s.ignored).toEqual(['m/#main.tf#', 'm/.#main.tf', 'm/.hidden.tf', 'm/main.tf~']);
    // Lexical order of application.
    expect(s.overrides).toEqual(['m/a_override.tf', 'm/override.tf.json', 'm/z_override.tf']);
  });

  test('opentofu also reads .tofu files, which shadow their .tf twin of the same syntax', () => {
    const s = selectConfigFiles(files, 'opentofu');
    expect(s.selected).toEqual([
      'm/a_override.tf',
      'm/data.tf',
      'm/data.tofu.json',
      'm/main.tf',
      'm/net.tofu',
      'm/override.tf.json',
      'm/vars.tf.json',
      'm/x_override.tofu',
      'm/z_override.tf',
    ]);
    expect(s.ignored).toEqual([
      'm/#main.tf#',
      'm/.#main.tf',
      'm/.hidden.tf',
      'm/data.tf.json',
      'm/main.tf~',
      'm/net.tf',
    ]);
    expect(s.overrides).toEqual([
      'm/a_override.tf',
      'm/override.tf.json',
      'm/x_override.tofu',
      'm/z_override.tf',
    ]);
  });

  test('an override file shadowed by its .tofu twin is not applied', () => {
    const s = selectConfigFiles(['override.tf', 'override.tofu', 'main.tf'], 'opentofu');
    expect(s.selected).toEqual(['main.tf', 'override.tofu']);
    expect(s.overrides).toEqual(['override.tofu']);
    expect(s.ignored).toEqual(['override.tf']);
  });

  test('names only differing by an override-like infix are primary files', () => {
    const s = selectConfigFiles(
      ['override_x.tf', 'my-override.tf', 'xoverride.tf', '_override.tf'],
      'terraform',
    );
    expect(s.overrides).toEqual(['_override.tf']);
  });

  test('lexical order is byte order', () => {
    const s = selectConfigFiles(['b.tf', 'B.tf', 'a.tf', 'é.tf', 'z.tf'], 'terraform');
    expect(s.selected).toEqual(['B.tf', 'a.tf', 'b.tf', 'z.tf', 'é.tf']);
  });
});
