// What a process is doing, read from Linux's /proc: which process runs a
// given executable, its descendants, the TCP/UDP sockets it holds and the
// files it has mapped (llama.cpp maps its model). Reading only.
import { readFileSync, readdirSync, readlinkSync, realpathSync } from "node:fs";

const read = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
};

/** The parent pid of `pid` (0 when it is gone). */
export function parentOf(pid) {
  // The command name (field 2) may hold spaces and parentheses: read after the last ')'.
  const stat = read(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] || 0);
}

/** Whether `ancestor` is `pid` or one of its ancestors. */
export function descendsFrom(pid, ancestor) {
  for (let p = pid, hops = 0; p > 1 && hops < 64; p = parentOf(p), hops++) if (p === ancestor) return true;
  return false;
}

/** The pids running `exe` (resolved) under `ancestor`. */
export function pidsOf(exe, ancestor) {
  const want = realpathSync(exe);
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/exe`) === want && descendsFrom(pid, ancestor);
      } catch {
        return false;
      }
    });
}

/** `{pid, exe, cmdline}` of every live descendant of `pid`. */
export function descendants(pid) {
  const out = [];
  const walk = (p) => {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      for (const c of read(`/proc/${p}/task/${t}/children`).split(/\s+/).filter(Boolean).map(Number)) {
        let exe = "";
        try {
          exe = readlinkSync(`/proc/${c}/exe`);
        } catch {
          /* gone, or not ours to read */
        }
        out.push({ pid: c, exe, cmdline: read(`/proc/${c}/cmdline`).split("\0").filter(Boolean).join(" ") });
        walk(c);
      }
    }
  };
  walk(pid);
  return out;
}

/** The inodes of the sockets `pid` holds open. */
export function socketInodes(pid) {
  const inodes = new Set();
  let fds = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  return inodes;
}

const hexPort = (addr) => parseInt(addr.split(":").pop(), 16);

/** `{table, local, remote, localPort, remotePort, state}` of the internet sockets `pid` holds. */
export function inetSockets(pid) {
  const mine = socketInodes(pid);
  const out = [];
  for (const table of ["tcp", "tcp6", "udp", "udp6"]) {
    for (const line of read(`/proc/${pid}/net/${table}`).split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !mine.has(f[9])) continue;
      out.push({ table, local: f[1], remote: f[2], localPort: hexPort(f[1]), remotePort: hexPort(f[2]), state: f[3] });
    }
  }
  return out;
}

/** The files `pid` has mapped into memory. */
export function mappedFiles(pid) {
  const files = new Set();
  for (const line of read(`/proc/${pid}/maps`).split("\n")) {
    const path = line.trim().split(/\s+/).slice(5).join(" ");
    if (path.startsWith("/")) files.add(path);
  }
  return [...files];
}

/** A variable of `pid`'s environment, when readable. */
export function environOf(pid, name) {
  for (const kv of read(`/proc/${pid}/environ`).split("\0")) if (kv.startsWith(name + "=")) return kv.slice(name.length + 1);
  return undefined;
}
