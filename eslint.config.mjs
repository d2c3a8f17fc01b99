import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first. A module may import its own layer and the layers below it,
 * never one above: an upward import (or a cycle between directories) fails lint. Leaves: the shared
 * model types, errors, version and storage (ports and adapters, which import nothing else).
 * `src/config.ts`, `src/cli` and `handlers/` sit on top. docs/architecture.md explains each layer.
 */
export const LAYERS = [
  ['addrs'],
  ['constraints', 'archive', 'hcl'],
  ['modules'],
  ['lockfile'],
  ['policy'],
  ['rules'],
  ['report', 'fix'],
  ['scan'],
  ['service'],
  ['cli'],
];

const AWS_SDK = {
  group: ['@aws-sdk/*', '@smithy/*'],
  message: 'Only storage adapters (src/storage) import the AWS SDK.',
};

/** One config block per layer: imports of any higher layer are errors. */
function layerRules() {
  return LAYERS.flatMap((layer, i) => {
    const above = LAYERS.slice(i + 1).flat();
    if (above.length === 0) return [];
    return layer.map((dir) => ({
      files: [`src/${dir}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              ...above.map((up) => ({
                group: [`**/${up}`, `**/${up}/**`],
                message: `src/${dir} is below src/${up} in the layer order (eslint.config.mjs LAYERS): it must not import it.`,
              })),
              AWS_SDK,
            ],
          },
        ],
      },
    }));
  });
}

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
    ignores: ['src/storage/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [AWS_SDK] }] },
  },
  {
    // The leaves import no other part of src/.
    files: ['src/model.ts', 'src/errors.ts', 'src/version.ts', 'src/storage/**/*.ts', 'src/util/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: LAYERS.flat().flatMap((d) => [`**/${d}`, `**/${d}/**`]),
              message: 'The model, errors, version, util and storage are leaves: they import no other layer.',
            },
          ],
        },
      ],
    },
  },
  ...layerRules(),
  {
    files: ['src/config.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
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
