import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] })

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'src/web/dist/**',
      'coverage/**',
      'test/.tmp/**',
      // The example project of `flakewatch demo`: a user's Vitest project, not flakewatch's code.
      'examples/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowNullish: true },
      ],
    },
  },
  // One-way dependencies: the core never reaches out to its consumers.
  {
    files: ['src/analysis/**'],
    rules: restrict([{ group: ['../*', '!../model.js'], message: 'analysis imports only model' }]),
  },
  {
    files: ['src/ingest/**'],
    rules: restrict([{ group: ['../store/*', '../server/*', '../cli/*'], message: 'ingest knows no database' }]),
  },
  { files: ['src/heal/similarity.ts'], rules: restrict([{ group: ['../*', './*'], message: 'similarity is pure' }]) },
  {
    files: ['src/{model,errors,ingest,store,analysis,quarantine,export,heal}/**', 'src/*.ts'],
    rules: restrict([
      { group: ['**/cli/*', '**/server/*', '**/web/*'], message: 'the core never imports its consumers' },
    ]),
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
)
