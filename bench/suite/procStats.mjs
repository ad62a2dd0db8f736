/**
 * What one proxy process costs, read from Linux /proc ("peak RSS of the proxy process",
 * "CPU seconds of the proxy"). Only the proxy's own process is counted, never its upstream child:
 * every path spawns the same upstream, so its cost is not the proxy's.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

/** Clock ticks per second for /proc/PID/stat's utime/stime (USER_HZ, almost always 100). */
const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of `pid` in seconds, or null when the process is gone. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 (comm) may hold spaces and parentheses: split after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After comm, fields start at index 3 (state); utime is field 14, stime 15 (proc(5)).
    const utime = Number(fields[14 - 3]);
    const stime = Number(fields[15 - 3]);
    return (utime + stime) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

function statusKiB(pid, key) {
  try {
    const match = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? null : Number(match[1]);
  } catch {
    return null;
  }
}

/**
 * Tracks the peak resident set of `pid` over one measured stretch. Resets the kernel's high-water
 * mark (`echo 5 > /proc/PID/clear_refs`, Linux ≥ 4.0) so start-up and earlier workloads do not
 * count, and also polls VmRSS every `pollMs` as a fallback where the reset is not allowed.
 * Returns a cleanup-style `stop()` that yields the peak in bytes (null when unknown).
 */
export function trackPeakRss(pid, { pollMs = 20 } = {}) {
  let resetWorked = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    resetWorked = true;
  } catch {
    resetWorked = false;
  }
  let polledPeakKiB = statusKiB(pid, "VmRSS") ?? 0;
  const timer = setInterval(() => {
    polledPeakKiB = Math.max(polledPeakKiB, statusKiB(pid, "VmRSS") ?? 0);
  }, pollMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      const hwm = resetWorked ? statusKiB(pid, "VmHWM") : null;
      const peakKiB = Math.max(hwm ?? 0, polledPeakKiB);
      return {
        peakRssBytes: peakKiB > 0 ? peakKiB * 1024 : null,
        method: resetWorked ? "VmHWM after clear_refs" : `VmRSS polled every ${pollMs} ms`,
      };
    },
  };
}

/** CPU and peak RSS of `pid` over one measured stretch; `stop()` returns both. */
export function measureProcess(pid) {
  if (pid === null || pid === undefined) return { stop: () => null };
  const cpuStart = cpuSeconds(pid);
  const rssBeforeKiB = statusKiB(pid, "VmRSS");
  const rss = trackPeakRss(pid);
  return {
    stop() {
      const cpuEnd = cpuSeconds(pid);
      const { peakRssBytes, method } = rss.stop();
      return {
        pid,
        cpuSeconds: cpuStart === null || cpuEnd === null ? null : round(cpuEnd - cpuStart, 3),
        peakRssBytes,
        // What the stretch added on top of what the process already held (Node alone is ~50 MiB).
        rssBeforeBytes: rssBeforeKiB === null ? null : rssBeforeKiB * 1024,
        rssMethod: method,
      };
    },
  };
}

function round(value, digits) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
