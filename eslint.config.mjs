import path from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import architecture from './scripts/eslint-architecture.mjs';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/**
 * The layers of src/, lowest first: each entry is a directory of src/ or a file at its root. A
 * module may import its own layer and the layers below it, never one above (handlers/ sits above
 * all of them). The rules are in scripts/eslint-architecture.mjs: `tfguard/layers` resolves every
 * import to its file and fails an upward one, a dynamic import()/require() outside
 * src/util/lazy.ts, the AWS SDK outside src/storage, src/ importing outside src/, and a src/ entry
 * missing from this list; `tfguard/no-cycle` fails a cycle between files or between the
 * directories of src/. test/architecture/layers.test.ts plants each violation to prove the rules
 * fire. docs/architecture.md explains each layer.
 */
export const LAYERS = [
  // Leaves: the shared vocabulary, errors, version, small helpers and storage (ports and adapters).
  ['model.ts', 'errors.ts', 'version.ts', 'util', 'storage'],
  ['addrs'],
  ['constraints', 'archive', 'hcl'],
  ['modules'],
  ['lockfile'],
  ['policy'],
  ['rules'],
  ['fix'],
  ['report'],
  ['scan'],
  ['service'],
  // Top: the command line and the one module that reads process.env.
  ['cli', 'config.ts'],
];

/** The one file where a dynamic import()/require() may load code on first use. */
export const LAZY = 'src/util/lazy.ts';

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      'dist-cli',
      'coverage',
      '.serverless',
      '.esbuild',
      '.build',
      'examples',
      'test/fixtures',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    // Named, so that typescript-eslint does not guess between this repository and a copy of it
    // (test/architecture/lint-planted.mjs lints one).
    languageOptions: { parserOptions: { tsconfigRootDir: ROOT } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/config.ts reads process.env.' },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'handlers/**/*.ts'],
    plugins: { tfguard: architecture },
    rules: {
      'tfguard/layers': ['error', { root: ROOT, layers: LAYERS, lazy: LAZY, sdk: 'src/storage/' }],
      'tfguard/no-cycle': ['error', { root: ROOT }],
      // npm's semver orders pre-releases unlike Terraform and rejects versions Terraform reads
      // (`1.2`); it stays a devDependency for the tests that compare the two.
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'semver',
              message: "Versions are ordered as Terraform orders them: src/constraints, not npm's semver.",
            },
          ],
          patterns: [
            {
              group: ['semver/*'],
              message: 'Versions are ordered as Terraform orders them: src/constraints.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/config.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // The CLI launcher runs before the CLI (and config.ts, which imports most of the scanner) is
    // loaded: it reads the cache directory's variables and TFGUARD_CODE_CACHE itself.
    files: ['src/cli/launch.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
