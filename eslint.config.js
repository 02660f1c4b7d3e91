import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'coverage/**', 'scripts/tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.name='parseFloat']", message: 'Money never passes through floats: use lib/money.ts.' },
        { selector: "CallExpression[callee.property.name='toFixed']", message: 'Money never passes through floats: use lib/money.ts.' },
      ],
    },
  },
  // Functions stay short enough to read in one screen; tests are exempt.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  // Benchmarks format timings and ratios, not money.
  // Measurement scripts print timings and ratios, not money.
  { files: ['scripts/bench*.ts', 'scripts/soak.ts'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['scripts/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
);
