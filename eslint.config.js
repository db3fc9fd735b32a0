// ESLint: typescript-eslint's type-aware rules over the sources, tests and scripts. This code is
// all processes and sockets, so promises that nobody awaits or that land where a callback is
// expected are errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'bench-results/', 'generated/', '**/*.cjs', '**/*.d.cts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The plain JavaScript files (bin/, the build scripts) are outside every tsconfig; more
        // than the default 8 of them are linted with the default project.
        projectService: {
          allowDefaultProject: ['*.js', 'bin/*.js', 'scripts/*.mjs'],
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 16,
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-control-regex': 'off',
      // An async function without await is a fine way to return a promise that carries its throws.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests and their lab (lab/: what tests and benches drive) read loosely typed JSON (tool
    // results, audit lines) and assert its shape.
    files: ['test/**/*.ts', 'lab/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: globals.node,
    },
  },
  {
    // The programs' entries are CommonJS (bin/package.json): tmux-run-mcp requires its start bundle.
    files: ['bin/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
