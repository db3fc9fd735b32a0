// The helper process's entry, what the shells exec (shell/tmux-run.zsh, .bash, .fish). The helper
// itself is helper/helper.ts: loaded from its one-file bundle when there is a safe one of this
// build (helper/bundle.ts), else from its modules, the same code.
import { loadBundled } from './bundle.js';

(loadBundled() ?? (await import('./helper.js'))).runHelper();
