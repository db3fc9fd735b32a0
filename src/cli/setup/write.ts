// The parts of setup that need the parsers, loaded only when `tmux-run setup` runs.
import { stringify } from 'smol-toml';
import type { Client } from './clients.js';
import { SERVER_NAME, type ServerEntry } from './entry.js';
import { mergeJson } from './json-config.js';
import type { MergeResult } from './merge.js';
import { mergeToml } from './toml-config.js';

/** The text a person would add to the client's file by hand: the container and the entry. */
export function fragment(client: Client, server: ServerEntry): string {
  const body = { [client.container]: { [SERVER_NAME]: client.entry(server) } };
  return client.format === 'toml' ? stringify(body) : `${JSON.stringify(body, null, 2)}\n`;
}

/** `text` (the client's file, '' when there is none) with the entry merged in. */
export function mergeInto(client: Client, text: string, server: ServerEntry): MergeResult {
  const entry = client.entry(server);
  if (client.format === 'toml') return mergeToml(text, client.container, SERVER_NAME, entry);
  return mergeJson(text, { dialect: client.dialect ?? 'json', container: client.container, name: SERVER_NAME, entry });
}
