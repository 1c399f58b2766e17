import fs from 'node:fs';
import os from 'node:os';

/** A sysfs value, or null where this kernel has none (no cpuidle driver, the module not loaded). */
function sysfs(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * How an idle core of this host waits, for the results' header. On a virtual machine whose
 * cpuidle driver is `haltpoll` with guest halt polling off (`guest_halt_poll_ns` 0, as the
 * kernel command line of the Firecracker hosts these runs are made on sets it), an idle vCPU
 * halts at once and is woken through the hypervisor. A server whose clients' threads fall idle
 * between its answers then pays that wake-up on every answer: one files process's 4 kB rate
 * settles at one of two levels, ~45,000 or ~60,000 requests a second here, and with 200 µs of
 * polling it took the upper one every time (bench/README, "4 kB files: the two speeds are the
 * virtual machine's idle halts").
 */
export function idlePolicy(): string {
  const driver = sysfs('/sys/devices/system/cpu/cpuidle/current_driver');
  if (!driver) return 'cpuidle: none';
  const poll = sysfs('/sys/module/haltpoll/parameters/guest_halt_poll_ns');
  if (driver !== 'haltpoll' || poll === null) return `cpuidle: ${driver}`;
  return `cpuidle: haltpoll, guest halt polling ${poll === '0' ? 'off' : `up to ${Number(poll) / 1000} µs`}`;
}

/** The machine a run was made on: cores and their model, memory, how idle cores wait, Node. */
export function describeHost(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim();
  return `${cpus.length} cores${model ? ` (${model})` : ''}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${idlePolicy()}, Node ${process.version}`;
}
