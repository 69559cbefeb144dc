// Lints ui/src: the typescript-eslint recommended rules, the rules of hooks
// (Preact's hooks from preact/hooks follow React's rules, so the React plugin
// applies) and no import cycles — issue 15 asks that ui/src has none, and
// `import-x/no-cycle` proves it on every run of scripts/test.sh. The lint
// script passes --max-warnings 0, so a warning fails it too: an effect that
// lists fewer dependencies on purpose says why in a disable comment.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { importX } from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import reactHooks from "eslint-plugin-react-hooks";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**"] },
  {
    files: ["src/**/*.{ts,tsx}"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    plugins: { "import-x": importX, "react-hooks": reactHooks },
    settings: {
      // Without these, import-x parses only .js files and sees no cycle.
      "import-x/extensions": [".ts", ".tsx"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
    },
    rules: {
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "import-x/no-self-import": "error",
      // `{ key: _key, ...rest }` drops a field by destructuring it away.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "warn",
    },
  },
  {
    // Generated from Rust (ts-rs and core's api list): a call without
    // arguments has the type `{}` there on purpose.
    files: ["src/generated/**"],
    rules: { "@typescript-eslint/no-empty-object-type": "off" },
  },
);
