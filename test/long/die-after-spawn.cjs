// The orphan window's seam (test/long/faults.test.ts): preloaded into a helper (node --require, by
// the TMUX_RUN_NODE wrapper the test gives its pane), it SIGKILLs the helper right after it spawns
// a run's /bin/sh, before the helper notes the run's process group, through either spawn (the
// native addon's, or Node's). The product knows nothing of it.
'use strict';
const Module = require('node:module');
const childProcess = require('node:child_process');

const isShell = (file) => file === '/bin/sh';
const die = () => process.kill(process.pid, 'SIGKILL');

const load = Module._load;
Module._load = function (request, ...rest) {
  const loaded = load.call(this, request, ...rest);
  if (typeof request !== 'string' || !request.endsWith('spawn.node')) return loaded;
  const addon = {};
  for (const k of Object.keys(loaded)) addon[k] = loaded[k].bind(loaded);
  addon.spawn = (argv, ...args) => {
    const out = loaded.spawn(argv, ...args);
    if (isShell(argv.toString('latin1').split('\0')[0])) die();
    return out;
  };
  return addon;
};

const spawn = childProcess.spawn;
childProcess.spawn = function (file, ...args) {
  const child = spawn.call(this, file, ...args);
  if (isShell(file)) die();
  return child;
};
Module.syncBuiltinESMExports();
