/** Path helpers and the directory names that signals recognise. */

/** Path segments that mark the working directory of a deployment. */
export const ROOT_SEGMENTS: readonly string[] = ['environments', 'envs', 'live', 'stacks', 'deployments'];
/** Path segments of example configurations. */
export const EXAMPLE_SEGMENTS: readonly string[] = ['examples', 'example', '_examples', 'samples'];
/** Path segments of test configurations (and CI-only configurations). */
export const TEST_SEGMENTS: readonly string[] = [
  'tests',
  'test',
  'e2e-tests',
  'e2e',
  'integration-tests',
  'test-fixtures',
  'fixtures',
  '.github',
  '.gitlab',
  '.circleci',
];
export const SHARED_SEGMENT = 'modules';
export const WRAPPER_SEGMENT = 'wrappers';
/** Files copied into other modules by convention (`mixins/`, `*.mixin.tf`). */
export const MIXIN_SEGMENT = 'mixins';

export function segments(path: string): string[] {
  return path === '.' ? [] : path.split('/');
}

/** True when `path` is strictly below `ancestor`. */
export function isAncestor(ancestor: string, path: string): boolean {
  return ancestor === '.' ? path !== '.' : path.startsWith(`${ancestor}/`);
}

/** The parent directory (`.` for a top-level directory); undefined for `.` itself. */
export function parentDir(path: string): string | undefined {
  if (path === '.') return undefined;
  const i = path.lastIndexOf('/');
  return i < 0 ? '.' : path.slice(0, i);
}
