// The local relay of a remote pane (docs/remote.md): `tmux-run ssh` stays as the parent of the
// person's ssh and listens on a socket of its own private directory, the local end of the
// session's `-R` forward. It accepts only connections whose peer (SO_PEERCRED) is its own ssh
// child. The far end's helper opens the control link (hello, welcome with the record and secret,
// ready); the relay then publishes the pane in the local registry (the record a local helper
// writes, plus `remote`) and listens on the record's socket for brokers: each broker connection
// is paired with a data connection the far end opened through the forward (one is kept spare),
// and bytes go both ways unchanged, so the broker-helper protocol is the same end to end.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { socketPath, recordPath } from '../core/enrollment/layout.js';
import { removeQuietly, writeRecord, type EnrollmentRecord } from '../core/enrollment/record.js';
import { freshId, paneGeneration, serverGeneration } from '../core/enrollment/generation.js';
import { bootId, procStat } from '../core/os/proc.js';
import { BUILD_ID } from '../core/protocol/build.js';
import { encodeFrame } from '../core/protocol/framing.js';
import { socketTransport, type Transport } from '../core/protocol/transport.js';
import { peerCred } from '../core/os/peer-cred.js';
import { readFirstFrame } from './first-frame.js';
import { checkFar, LINK_BEAT_MS, LINK_VERSION, type Hello, type RelayMessage } from '../core/enrollment/remote-link.js';
import { remoteProcessGeneration, type RemoteBinding } from '../core/enrollment/remote-binding.js';
import { monotonicMs } from '../core/protocol/trace.js';
import { RelayScreen } from './relay-screen.js';
import { auditPath } from '../core/audit/audit-log.js';
import { RelayAudit } from './relay-audit.js';

/** How long a new connection through the forward may take to say who it is. */
const FIRST_FRAME_MS = 10_000;
/** How long a broker connection waits for a data connection from the far end. */
const PAIR_WAIT_MS = 5_000;
/**
 * How long a hello waits for the enrollment before it to end: a far shell that ran `exec` (bash,
 * fish: no channel of theirs closes) is seen by its helper within half a second, and the new
 * shell's helper may say hello first.
 */
const REPLACED_WAIT_MS = 5_000;
const REPLACED_POLL_MS = 50;

/** The local pane the session runs in, as tmux and /proc said when `tmux-run ssh` started. */
export interface LocalPane {
  paneId: string;
  tmuxSocket: string;
  serverPid: number;
  serverStart: string;
  paneTty: string;
}

export interface RelayOptions {
  destination: string;
  registryDir: string;
  forwardDir: string;
  pane: LocalPane;
  log: (line: string) => void;
  /** The local audit trail the far end's entries go to (default: auditPath()). */
  auditPath?: string;
}

/** One enrollment served through the control link: its record, its broker listener, its links. */
interface Served {
  record: EnrollmentRecord;
  control: Transport;
  key: string;
  brokers?: Server;
  spares: Socket[];
  waiting: Array<(s: Socket | undefined) => void>;
  paired: Set<Socket>;
  /** The screen check's reads of this pane, for the far end (relay-screen.ts). */
  screen: RelayScreen;
  /** The `beat` on the control link (LINK_BEAT_MS). */
  beat?: NodeJS.Timeout;
}

export class Relay {
  readonly privateDir: string;
  readonly localSocket: string;
  /** The far end's socket path of this session: fresh each time (a stale one cannot be bound again). */
  readonly remoteSocket: string;
  private server: Server | undefined;
  private sshPid: number | undefined;
  private sshStart = '';
  private served: Served | undefined;
  private closed = false;
  private readonly audit: RelayAudit;

  constructor(private readonly o: RelayOptions) {
    this.audit = new RelayAudit(o.auditPath ?? auditPath(), o.log);
    this.privateDir = join(o.registryDir, `ssh.${randomBytes(8).toString('hex')}`);
    this.localSocket = join(this.privateDir, 'l.sock');
    this.remoteSocket = join(o.forwardDir, `${freshId()}.sock`);
  }

  /** The `-R` argument for ssh. */
  forwardSpec(): string {
    return `${this.remoteSocket}:${this.localSocket}`;
  }

  /** Makes the private directory (0700) and listens on the local end of the forward (0600). */
  async listen(): Promise<void> {
    mkdirSync(this.privateDir, { mode: 0o700 });
    chmodSync(this.privateDir, 0o700);
    const server = createServer({ allowHalfOpen: false }, (c) => void this.accept(c));
    const umask = process.umask(0o077);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.localSocket, () => resolve());
      });
    } finally {
      process.umask(umask);
    }
    chmodSync(this.localSocket, 0o600);
    this.server = server;
  }

  /** The ssh client this relay started: only its connections are served. */
  setSsh(pid: number): void {
    this.sshPid = pid;
    this.sshStart = procStat(pid)?.startTicks ?? '';
  }

  /** A connection on the local end of the forward: the ssh child's, opening with hello or data. */
  private async accept(c: Socket): Promise<void> {
    c.on('error', () => c.destroy());
    let peer;
    try {
      peer = peerCred(c);
    } catch (e) {
      this.o.log(`refused a connection: ${(e as Error).message}`);
      return void c.destroy();
    }
    if (this.sshPid === undefined || peer.pid !== this.sshPid) {
      this.o.log(`refused a connection from pid ${peer.pid}: not this session's ssh (pid ${this.sshPid})`);
      return void c.destroy();
    }
    let first;
    try {
      first = checkFar(await readFirstFrame(c, FIRST_FRAME_MS));
    } catch (e) {
      this.o.log(`a connection said nothing usable: ${(e as Error).message}`);
      return void c.destroy();
    }
    if (first?.type === 'hello') return this.hello(c, first);
    if (first?.type === 'data' && this.served && first.key === this.served.key) return this.spare(this.served, c);
    this.o.log(`refused a connection that opened with ${first ? first.type : 'an unknown message'}`);
    c.destroy();
  }

  /** The far end's helper says who it is: refused, or welcomed with the enrollment's record. */
  private hello(c: Socket, h: Hello, waited = 0): void {
    const send = (m: RelayMessage): boolean => c.write(encodeFrame(m));
    const refuse = (message: string): void => {
      this.o.log(`refused the far end: ${message}`);
      send({ type: 'refused', message });
      c.end();
    };
    if (h.version !== LINK_VERSION || h.build !== BUILD_ID)
      return refuse(
        `the far end's tmux-run is build ${h.build}, the local one is build ${BUILD_ID}: update the far end with 'tmux-run setup --remote ${this.o.destination}' on the local side (remote_unavailable)`,
      );
    if (this.served && waited < REPLACED_WAIT_MS && !c.destroyed)
      return void setTimeout(() => this.hello(c, h, waited + REPLACED_POLL_MS), REPLACED_POLL_MS);
    if (this.served)
      return refuse(`this ssh session's pane is already enrolled (generation ${this.served.record.generation})`);
    if (this.sshPid === undefined || !this.sshStart) return refuse('the local ssh client could not be identified');
    const record = this.recordFor(h);
    const key = randomBytes(16).toString('hex');
    const control = socketTransport(c);
    c.resume();
    const screen = new RelayScreen(this.o.pane, this.o.log);
    const served: Served = { record, control, key, spares: [], waiting: [], paired: new Set(), screen };
    this.served = served;
    control.onmessage = (raw) => {
      const m = checkFar(raw);
      if (m?.type === 'ready') void this.publish(served);
      else if (m?.type === 'read_screen' && this.served === served) void screen.answer(control, m.id);
      else if (m?.type === 'hold_screen' && this.served === served) screen.hold();
      else if (m?.type === 'audit' && this.served === served) this.audit.take(m.entry, served.record);
    };
    control.onclose = () => this.unpublish(served, 'the far end closed its link');
    control.send({ type: 'welcome', record, key, now: monotonicMs() } satisfies RelayMessage);
    served.beat = setInterval(() => control.send({ type: 'beat' } satisfies RelayMessage), LINK_BEAT_MS);
  }

  /** The enrollment record for the far end's shell in this pane, through this ssh client. */
  private recordFor(h: Hello): EnrollmentRecord {
    const boot = bootId();
    const p = this.o.pane;
    const binding: RemoteBinding = {
      destination: this.o.destination,
      hostname: h.hostname,
      relay_pid: process.pid,
      relay_start: procStat(process.pid)?.startTicks ?? '',
      ssh_pid: this.sshPid!,
      ssh_start: this.sshStart,
      remote_boot: h.boot,
    };
    const gens = {
      server_generation: serverGeneration(p.tmuxSocket, p.serverPid, p.serverStart, boot),
      pane_id: p.paneId,
      process_generation: remoteProcessGeneration(boot, binding, h.shell_pid, h.shell_start),
      enrollment_generation: freshId(),
    };
    return {
      version: 1,
      ...gens,
      generation: paneGeneration(gens),
      tmux_socket: p.tmuxSocket,
      tmux_server_pid: p.serverPid,
      shell_pid: h.shell_pid,
      shell_start: h.shell_start,
      shell_tty: p.paneTty,
      helper_pid: h.helper_pid,
      socket: socketPath(this.o.registryDir, gens.enrollment_generation),
      // Not a shell channel of the registry: nothing there is ever removed in its name.
      channel: join(this.privateDir, 'remote'),
      enrolled_at: new Date().toISOString(),
      secret: randomBytes(32).toString('hex'),
      build: h.build,
      shell: h.shell,
      editor_check: h.editor_check,
      ...(h.editor_check_reason !== undefined ? { editor_check_reason: h.editor_check_reason } : {}),
      remote: binding,
    };
  }

  /** The far end is ready: listen for brokers on the record's socket, then publish the record. */
  private async publish(s: Served): Promise<void> {
    if (s.brokers || this.served !== s) return;
    const brokers = createServer({ allowHalfOpen: false }, (b) => void this.broker(s, b));
    s.brokers = brokers;
    const umask = process.umask(0o077);
    try {
      await new Promise<void>((resolve, reject) => {
        brokers.once('error', reject);
        brokers.listen(s.record.socket, () => resolve());
      });
      chmodSync(s.record.socket, 0o600);
      if (this.served !== s) return;
      writeRecord(this.o.registryDir, s.record);
      this.o.log(
        `enrolled pane ${s.record.pane_id} at ${s.record.remote!.hostname} (generation ${s.record.generation})`,
      );
    } catch (e) {
      this.o.log(`cannot publish the pane: ${(e as Error).message}`);
      this.unpublish(s, 'it could not be published');
    } finally {
      process.umask(umask);
    }
  }

  /** A data connection from the far end: kept spare until a broker needs it. */
  private spare(s: Served, c: Socket): void {
    if (this.served !== s) return void c.destroy();
    const waiter = s.waiting.shift();
    if (waiter) return waiter(c);
    s.spares.push(c);
    c.once('close', () => {
      const i = s.spares.indexOf(c);
      if (i >= 0) s.spares.splice(i, 1);
    });
  }

  /** A broker's connection: paired with a data connection, bytes passed both ways as they come. */
  private async broker(s: Served, b: Socket): Promise<void> {
    b.on('error', () => b.destroy());
    b.pause();
    let d = s.spares.shift();
    s.control.send({ type: 'want' } satisfies RelayMessage);
    if (!d) {
      d = await new Promise<Socket | undefined>((resolve) => {
        const timer = setTimeout(() => {
          const i = s.waiting.indexOf(take);
          if (i >= 0) s.waiting.splice(i, 1);
          resolve(undefined);
        }, PAIR_WAIT_MS);
        const take = (x: Socket | undefined): void => {
          clearTimeout(timer);
          resolve(x);
        };
        s.waiting.push(take);
      });
    }
    if (!d || b.destroyed || this.served !== s) {
      d?.destroy();
      return void b.destroy();
    }
    const data = d;
    s.paired.add(b).add(data);
    data.on('error', () => data.destroy());
    const end = (): void => {
      s.paired.delete(b);
      s.paired.delete(data);
      b.destroy();
      data.destroy();
    };
    b.once('close', end);
    data.once('close', end);
    b.pipe(data);
    data.pipe(b);
  }

  /** The enrollment ends (the far end's helper or shell is gone): the pane is listed no more. */
  private unpublish(s: Served, why: string): void {
    if (this.served !== s) return;
    this.served = undefined;
    clearInterval(s.beat);
    this.o.log(`enrollment of pane ${s.record.pane_id} ended: ${why}`);
    removeQuietly(recordPath(this.o.registryDir, s.record.enrollment_generation));
    s.brokers?.close();
    removeQuietly(s.record.socket);
    for (const w of s.waiting.splice(0)) w(undefined);
    for (const c of [...s.spares.splice(0), ...s.paired]) c.destroy();
    s.screen.close();
    s.control.close();
  }

  /** Ends everything: the enrollment, the listener, the private directory. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.served) this.unpublish(this.served, 'the ssh session ended');
    this.audit.flush();
    this.server?.close();
    rmSync(this.privateDir, { recursive: true, force: true });
  }
}
