#!/usr/bin/env python3
"""The kernel side of vm/kernel-interop-test.sh, and the driver of the whole suite.

Runs in the guest's kernel namespace (rds4j-kernel, 10.88.0.1) as root. It opens AF_RDS sockets (kernel RDS
over TCP, rds_tcp) and starts the rds4j side, InteropDriver, in the rds4j namespace (rds4j-java, 10.88.0.2)
with `ip netns exec`, talking to it over its stdin/stdout. Each check prints one line, `PASS name: ...` or
`FAIL name: ...`, with the numbers measured; the exit status is 1 if any check failed.

  kernel_peer.py suite --java JAVA --classpath CP --dir DIR [--smoke]

The message format, the same on both sides (InteropDriver.java has the same functions): message idx of a
stream from port sport to port dport in run `run` (a random 32-bit number per check) has size(idx) bytes:
the 16-byte header (run, idx: u32; sport, dport: u16; size: u32, big-endian), cut to the size if shorter,
then bytes of a shared random block (block.bin, written here) from an offset that depends on all four. A
receiver knows which message comes next from each sender and compares the whole payload; a mismatch is
classified as stale (another run), duplicate (an earlier idx), gap (a later idx: messages lost) or corrupt.
"""
import argparse
import datetime
import errno
import os
import queue
import signal
import random
import socket
import struct
import subprocess
import sys
import threading
import time

SOL_RDS = 276
SO_RDS_TRANSPORT = 8
RDS_TRANS_TCP = 2
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33
HEADER = 16
M32 = 0xFFFFFFFF
K_IP, J_IP = "10.88.0.1", "10.88.0.2"
K_NS, J_NS = "rds4j-kernel", "rds4j-java"
TCP_PORT_J = 16386  # rds4j's listener, behind the nftables redirect of 16385
BLOCK = b""

failures = 0


def report(ok, name, text):
    global failures
    if not ok:
        failures += 1
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, text), flush=True)


def info(text):
    print("  " + text, flush=True)


# ---------------------------------------------------------------- the message format (as InteropDriver.java)

def mix(x):
    x = (x ^ 0x9E3779B9) & M32
    x = (x * 0x85EBCA6B) & M32
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & M32
    x ^= x >> 16
    return x


def size(idx, mx, big):
    """Size of message idx of a stream whose largest message is mx; big > 0: a largest one every big
    messages; big < 0: every message is mx bytes."""
    if big < 0:
        return mx
    if idx < 6:
        return (0, 1, mx, min(15, mx), min(16, mx), max(0, mx - 1))[idx]
    h = mix(idx)
    if big > 0 and idx % big == 0:
        return mx
    if big > 0 and idx % big == big // 2:
        return h % (mx + 1)
    if idx % 10 == 3:
        return h % min(65537, mx + 1)
    return h % min(2049, mx + 1)


def payload(run, idx, sport, dport, n):
    h = struct.pack(">IIHHI", run, idx, sport, dport, n)
    if n <= HEADER:
        return h[:n]
    off = mix((run * 31 + idx * 7 + sport * 65599 + dport) & M32) % (1 << 20)
    return h + BLOCK[off:off + n - HEADER]


def describe(data):
    s = "%d B" % len(data)
    if len(data) >= 4:
        s += " run %x" % struct.unpack_from(">I", data, 0)[0]
    if len(data) >= 8:
        s += " idx %d" % struct.unpack_from(">I", data, 4)[0]
    return s


def new_run():
    return random.randrange(1, 1 << 32)


# ---------------------------------------------------------------- kernel sockets

class Stats:
    """What the kernel side's receivers saw since the last reset (all sockets together)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.got = self.bytes = self.lost = self.dup = self.stale = self.corrupt = self.unexpected = 0
        self.errors = []
        self.last_progress = time.time()

    def error(self, kind, text):
        with self.lock:
            setattr(self, kind, getattr(self, kind) + 1)
            if len(self.errors) < 4:
                self.errors.append(text)

    def bad(self):
        return self.lost + self.dup + self.stale + self.corrupt + self.unexpected

    def first(self):
        return " | ".join(self.errors) or "-"


STATS = Stats()


class Pair:
    def __init__(self, run, count, mx, big):
        self.run, self.count, self.mx, self.big = run, count, mx, big
        self.next = 0


class KSock:
    """One AF_RDS socket of the kernel node, bound to K_IP:port; a receiver thread checks what arrives
    (unless reader=False: then nothing reads it until drain() is called)."""

    def __init__(self, port, rcvbuf=4 << 20, sndbuf=4 << 20, reader=True):
        self.port = port
        self.s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
        self.s.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_TCP)
        # SO_SNDBUF is capped by net.core.wmem_max (212992): the kernel refuses a message larger than half of the
        # socket's send buffer (EMSGSIZE), so 1 MiB messages need SO_SNDBUFFORCE (root)
        self.s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, sndbuf)
        if rcvbuf <= 4096:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        else:
            self.s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
        self.s.bind((K_IP, port))
        self.s.settimeout(0.2)
        self.pairs = {}
        self.lock = threading.Lock()
        self.pongs = queue.Queue()
        self.closed = False
        self.buf = bytearray((1 << 20) + 1)
        self.cond = threading.Condition()
        self.hold = self.parked = False
        self.thread = None
        if reader:
            self.thread = threading.Thread(target=self.run, daemon=True)
            self.thread.start()

    def expect(self, source, pair):
        with self.lock:
            self.pairs[source] = pair

    def progress(self):
        with self.lock:
            return sum(p.next for p in self.pairs.values()), sum(p.count for p in self.pairs.values())

    def close(self):
        """Closes the socket; returns once the receiver thread has let go of it (until then the kernel socket
        lives on, and rds_tcp cannot be unloaded)."""
        self.closed = True
        self.resume()
        self.s.close()
        if self.thread:
            self.thread.join(5)

    def pause(self):
        """Stops the receiver thread between two messages (returns once it has stopped)."""
        with self.cond:
            self.hold = True
            return self.cond.wait_for(lambda: self.parked or self.closed, timeout=5)

    def resume(self):
        with self.cond:
            self.hold = False
            self.cond.notify_all()

    def drain_queued(self):
        """With the receiver paused: reads and checks every message the kernel socket has queued."""
        got = 0
        while True:
            try:
                n, sender = self.s.recvfrom_into(self.buf, 0, socket.MSG_DONTWAIT)
            except (TimeoutError, socket.timeout, BlockingIOError):
                return got
            self.on_message(sender, bytes(self.buf[:n]))
            got += 1

    def run(self):
        while not self.closed:
            if self.hold:
                with self.cond:
                    while self.hold and not self.closed:
                        self.parked = True
                        self.cond.notify_all()
                        self.cond.wait(1)
                    self.parked = False
            try:
                n, sender = self.s.recvfrom_into(self.buf)
            except (TimeoutError, socket.timeout):
                continue
            except OSError as e:
                if not self.closed:
                    STATS.error("corrupt", "receiver %d: %s" % (self.port, e))
                return
            self.on_message(sender, bytes(self.buf[:n]))

    def on_message(self, sender, data):
        if sender[1] == 0:
            self.pongs.put((time.time(), len(data)))
            return
        with self.lock:
            p = self.pairs.get(sender)
            if p is None:
                STATS.error("unexpected", "to %d from %s: unexpected %s" % (self.port, sender, describe(data)))
                return
            self.check(p, sender, data)

    def check(self, p, sender, data):
        where = "to %d from %s at idx %d: " % (self.port, sender, p.next)
        if p.next < p.count:
            n = size(p.next, p.mx, p.big)
            if data == payload(p.run, p.next, sender[1], self.port, n):
                p.next += 1
                with STATS.lock:
                    STATS.got += 1
                    STATS.bytes += n
                    STATS.last_progress = time.time()
                return
            bad = "%s, expected run %x idx %d (%d B)" % (describe(data), p.run, p.next, n)
        else:
            bad = "%s after the last expected message" % describe(data)
        if len(data) >= 4 and struct.unpack_from(">I", data, 0)[0] != p.run:
            STATS.error("stale", where + "stale " + bad)
        elif len(data) >= 8 and struct.unpack_from(">I", data, 4)[0] < p.next:
            STATS.error("dup", where + "duplicate " + bad)
        elif len(data) >= 8 and p.next < struct.unpack_from(">I", data, 4)[0] < p.count:
            idx = struct.unpack_from(">I", data, 4)[0]
            with STATS.lock:
                STATS.lost += idx - p.next
                if len(STATS.errors) < 4:
                    STATS.errors.append(where + "gap of %d: %s" % (idx - p.next, bad))
            p.next = idx
            self.check(p, sender, data)
        else:
            STATS.error("corrupt", where + "corrupt " + bad)
            p.next += 1

    def drain(self, count, timeout):
        """Reads count messages (no receiver thread); returns how many arrived within timeout."""
        end = time.time() + timeout
        got = 0
        while got < count and time.time() < end:
            try:
                n, sender = self.s.recvfrom_into(self.buf)
            except (TimeoutError, socket.timeout):
                continue
            self.on_message(sender, bytes(self.buf[:n]))
            got += 1
        return got

    def try_send(self, data, dest):
        """One non-blocking send: 0 on success, else the errno (EAGAIN for a full send buffer)."""
        try:
            self.s.sendto(data, socket.MSG_DONTWAIT, dest)
            return 0
        except (TimeoutError, socket.timeout, BlockingIOError):
            return errno.EAGAIN
        except OSError as e:
            return e.errno


class Sender(threading.Thread):
    """Sends count messages from a kernel socket to each destination in turn (idx 0 to each, then idx 1, ...).
    Waits (without blocking in the kernel) while the destination port is congested (ENOBUFS) or the send
    buffer is full; gives up after `stall` seconds without one successful send, or when stopped."""

    def __init__(self, ks, run, count, mx, big, dests, stall):
        super().__init__(daemon=True)
        self.ks, self.run_id, self.count, self.mx, self.big, self.dests, self.stall = ks, run, count, mx, big, dests, stall
        self.sent = self.bytes = self.enobufs = 0
        self.sent_at = {d[1]: [] for d in dests}  # per destination port: when each idx was handed to the kernel
        self.error = None
        self.stop = threading.Event()
        self.start()

    def run(self):
        last = time.time()
        for idx in range(self.count):
            for dest in self.dests:
                n = size(idx, self.mx, self.big)
                data = payload(self.run_id, idx, self.ks.port, dest[1], n)
                while True:
                    if self.stop.is_set():
                        self.error = "stopped at idx %d" % idx
                        return
                    try:
                        self.ks.s.sendto(data, dest)  # the socket has a timeout: waits up to 0.2 s for send-buffer room
                        break
                    except (TimeoutError, socket.timeout):
                        pass
                    except OSError as e:
                        if e.errno != errno.ENOBUFS:
                            self.error = "%d->%s idx %d: %s" % (self.ks.port, dest, idx, e)
                            return
                        self.enobufs += 1
                        time.sleep(0.002)
                    if time.time() - last > self.stall:
                        self.error = "%d->%s idx %d: no send possible for %d s" % (self.ks.port, dest, idx, self.stall)
                        return
                last = time.time()
                self.sent_at[dest[1]].append(last)
                self.sent += 1
                self.bytes += n


def expect_all(socks, run, count, mx, big, sources):
    for ks in socks:
        with ks.lock:
            ks.pairs = {}
        for src in sources:
            ks.expect(src, Pair(run, count, mx, big))


def progress(socks):
    have = want = 0
    for ks in socks:
        h, w = ks.progress()
        have += h
        want += w
    return have, want


def wait_received(socks, stall, maximum):
    """Until every expected message is in, or nothing new for `stall` s, or `maximum` s: (done, got, want, secs)."""
    start = time.time()
    STATS.last_progress = max(STATS.last_progress, start)
    while True:
        have, want = progress(socks)
        now = time.time()
        if have == want or now - STATS.last_progress > stall or now - start > maximum:
            return have == want, have, want, now - start
        time.sleep(0.02)


# ---------------------------------------------------------------- the rds4j side

class Java:
    """InteropDriver in the rds4j namespace; cmd() sends one command line and returns its reply as a dict."""

    def __init__(self, args, log):
        self.log = open(log, "a")
        self.p = subprocess.Popen(["ip", "netns", "exec", J_NS] + args.java_cmd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.tag = 0
        threading.Thread(target=self.read, daemon=True).start()
        self.ready = self.reply(90)

    def read(self):
        for line in self.p.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def reply(self, timeout, tag=None):
        """The next line (the READY line), or the reply to the command numbered tag: a late reply to an earlier
        command that timed out is skipped, never taken for this one's."""
        end = time.time() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.001, end - time.time()))
            except queue.Empty:
                return {"_": "TIMEOUT", "line": "no reply within %d s" % timeout}
            if line is None:
                self.lines.put(None)
                return {"_": "EOF", "line": "the rds4j driver exited (%s)" % self.p.poll()}
            if tag is None:
                return parse(line)
            if line.startswith("%d " % tag):
                return parse(line.split(" ", 1)[1])

    def cmd(self, line, timeout=60):
        self.tag += 1
        try:
            self.p.stdin.write("%d %s\n" % (self.tag, line))
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError):
            return {"_": "EOF", "line": "the rds4j driver is gone"}
        return self.reply(timeout, self.tag)

    def kill(self):
        self.p.kill()
        self.p.wait()

    def quit(self):
        r = self.cmd("quit", 30)
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        return r


def parse(line):
    """'WORD a=1 b=x first=rest of line' -> {'_': 'WORD', 'a': '1', 'b': 'x', 'first': 'rest of line', 'line': line}"""
    d = {"line": line}
    head, sep, first = line.partition(" first=")
    words = head.split()
    d["_"] = words[0] if words else ""
    for w in words[1:]:
        k, _, v = w.partition("=")
        d[k] = v
    if sep:
        d["first"] = first
    return d


def num(d, key, default=-1):
    try:
        return int(d.get(key, default))
    except ValueError:
        return default


def java_ok(r):
    return r.get("done") == "true" and all(num(r, k) == 0 for k in ("lost", "dup", "stale", "corrupt", "unexpected"))


def addr_list(ip, ports):
    return ",".join("%s:%d" % (ip, p) for p in ports)


def sh(*cmd):
    r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def unread_in_rds4j(pid):
    """Bytes TCP has received for rds4j (process pid) from the kernel node and rds4j has not read yet: the
    rx_queue of its established connections to K_IP in /proc/PID/net/tcp and tcp6 (that process's namespace;
    the JVM's sockets are IPv6 ones with IPv4-mapped addresses, ::ffff:a.b.c.d, whose last word is the IPv4)."""
    peer = "%02X%02X%02X%02X" % tuple(reversed([int(x) for x in K_IP.split(".")]))
    total = 0
    for table in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, table)) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if fields[2].split(":")[0].endswith(peer) and fields[3] == "01":
                        total += int(fields[4].split(":")[1], 16)
        except OSError:
            return -1
    return total


def tcp_connections():
    """Established TCP connections between the two nodes as the kernel node has them (this process runs in its
    namespace; rds_tcp's sockets are IPv4 ones): a (local address:port, tx_queue, rx_queue) for each."""
    peer = "%02X%02X%02X%02X" % tuple(reversed([int(x) for x in J_IP.split(".")]))
    out = []
    with open("/proc/self/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[2].startswith(peer + ":") and fields[3] == "01":
                tx, rx = fields[4].split(":")
                out.append((fields[1], int(tx, 16), int(rx, 16)))
    return out


def java_state(java):
    """The state of rds4j's connection to the kernel node (UP, DOWN, CONNECTING), or None."""
    for c in java.cmd("conns", 10)["line"].split()[1:]:
        f = c.split(":")
        if f[0] == "%s>%s" % (J_IP, K_IP):
            return f[2]
    return None


def unacked_to_kernel(java):
    r = java.cmd("conns", 10)
    for c in r["line"].split()[1:]:
        f = c.split(":")
        if f[0] == "%s>%s" % (J_IP, K_IP):
            return int(f[-1].split("=")[1]), c
    return -1, r["line"]


def rds4j_downs(log):
    """(epoch s, reason) of every 'down' or 'dropped' line of the rds4j log (its dates carry the zone)."""
    out = []
    try:
        with open(log) as f:
            for line in f:
                if "] down: " in line or "] dropped: " in line:
                    try:
                        t = datetime.datetime.strptime(" ".join(line.split()[:3]), "%Y-%m-%d %H:%M:%S.%f %z").timestamp()
                    except ValueError:
                        continue
                    out.append((t, line.split("] ", 2)[-1].strip()))
    except OSError:
        pass
    return out


def utc(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def wait_until(cond, timeout, step=0.05):
    end = time.time() + timeout
    while True:
        v = cond()
        if v or time.time() > end:
            return v
        time.sleep(step)


# ---------------------------------------------------------------- the checks

class Suite:
    def __init__(self, a):
        self.a = a
        self.smoke = a.smoke
        self.java = None
        self.kstream = []  # kernel stream sockets
        self.kports = [4000, 4001, 4002]
        self.jports = [5000, 5001, 5002]
        self.figures = []

    def start_java(self):
        self.java = Java(self.a, os.path.join(self.a.dir, "rds4j.log"))
        return self.java.ready

    def open_kernel(self):
        self.kstream = [KSock(p) for p in self.kports]

    def close_kernel(self):
        for ks in self.kstream:
            ks.close()
        self.kstream = []

    def streams(self, name, run, count, mx, big, stall, maximum, during=None):
        """Both directions at once: each kernel stream socket sends count messages to each rds4j stream socket
        and the other way round. Returns (k2j reply, j2k (done, got, want, secs), kernel senders, java SENT)."""
        java = self.java
        STATS.reset()
        expect_all(self.kstream, run, count, mx, big, [(J_IP, p) for p in self.jports])
        java.cmd("reset")
        ports = ",".join(map(str, self.jports))
        java.cmd("expect %x %d %d %d %s %s" % (run, count, mx, big, ports, addr_list(K_IP, self.kports)))
        t0 = time.time()
        senders = [Sender(ks, run, count, mx, big, [(J_IP, p) for p in self.jports], stall) for ks in self.kstream]
        self.senders = senders
        java.cmd("send %x %d %d %d %s %s" % (run, count, mx, big, ports, addr_list(K_IP, self.kports)))
        extra = during() if during else None
        j2k = wait_received(self.kstream, stall, maximum)
        k2j = java.cmd("recvwait %d %d" % (stall, max(5, maximum - (time.time() - t0))), maximum + 30)
        for s in senders:
            s.join(stall + 1)
        sent = java.cmd("sendwait %d" % stall, stall + 30)
        return k2j, j2k, senders, sent, extra, time.time() - t0

    def stream_lines(self, name, count, mx, k2j, j2k, senders, sent, secs):
        pairs = len(self.kports) * len(self.jports)
        want = pairs * count
        kerr = [s.error for s in senders if s.error]
        ok = java_ok(k2j) and num(k2j, "ok") == want and not kerr
        mib = num(k2j, "bytes") / 1048576.0
        report(ok, name + "-k2j",
               "%d kernel sockets x %d rds4j sockets x %d = %d messages of 0..%d B (%.1f MiB): %d received in order and "
               "byte-exact, lost %s, duplicated %s, stale %s, corrupt %s, unexpected %s; kernel send errors: %s; "
               "kernel sends refused with ENOBUFS and retried: %d; %.1f s (%s)"
               % (len(self.kports), len(self.jports), count, want, mx, mib, num(k2j, "ok"), k2j.get("lost"),
                  k2j.get("dup"), k2j.get("stale"), k2j.get("corrupt"), k2j.get("unexpected"), kerr or "none",
                  sum(s.enobufs for s in senders), secs, k2j.get("first", k2j["line"])))
        done, got, w, _ = j2k
        ok = done and STATS.got == want and STATS.bad() == 0 and num(sent, "errors") == 0 and sent.get("done") == "true"
        report(ok, name + "-j2k",
               "%d rds4j sockets x %d kernel sockets x %d = %d messages of 0..%d B (%.1f MiB): %d received in order and "
               "byte-exact, lost %d, duplicated %d, stale %d, corrupt %d, unexpected %d; rds4j sent %s (errors %s: %s); "
               "%.1f s (%s)"
               % (len(self.jports), len(self.kports), count, want, mx, STATS.bytes / 1048576.0, STATS.got, STATS.lost,
                  STATS.dup, STATS.stale, STATS.corrupt, STATS.unexpected, sent.get("n"), sent.get("errors"),
                  sent.get("first", sent["line"]), secs, STATS.first()))
        return mib, STATS.bytes / 1048576.0

    # 1. streams both ways, several sockets each side, sizes 0 B .. 1 MiB
    def check_streams(self):
        count = 20 if self.smoke else 300
        big = 0 if self.smoke else 100
        mx = 1 << 20
        seen = []

        def during():
            # the sockets of both sides share one TCP connection: count them once traffic flows both ways
            wait_until(lambda: self.java.cmd("progress")["got"] != "0" and progress(self.kstream)[0] > 0, 60, 0.1)
            seen.append(len(tcp_connections()))
            return seen

        k2j, j2k, senders, sent, _, secs = self.streams("stream", new_run(), count, mx, big, 30, 240, during)
        mk, mj = self.stream_lines("stream", count, mx, k2j, j2k, senders, sent, secs)
        self.figures.append("streams: %d messages per direction, %.1f MiB kernel->rds4j and %.1f MiB rds4j->kernel "
                            "at once in %.1f s" % (9 * count, mk, mj, secs))
        report(seen == [1], "one-connection",
               "TCP connections between the nodes while 3 x 3 sockets streamed both ways: %s (expected exactly 1: "
               "rds4j answers the kernel's probe with NPATHS=1, so the kernel uses one path)"
               % (seen[0] if seen else "not measured"))
        # the kernel's rule: what TCP has acked is delivered; rds4j must not keep it for retransmission
        n, c = wait_until(lambda: (lambda u: u if u[0] == 0 else None)(unacked_to_kernel(self.java)), 10, 0.2) \
            or unacked_to_kernel(self.java)
        report(n == 0, "delivery-rule",
               "messages rds4j still holds for retransmission to the kernel 10 s after the kernel received all of "
               "them: %d (%s); the kernel sends no RDS acks, so only its TCP acks can release them" % (n, c))

    # 2. pings both ways
    def check_pings(self):
        ks = KSock(4020)
        n, rtts, bad = 5, [], None
        for i in range(n):
            t0 = time.time()
            ks.s.sendto(b"", (J_IP, 0))
            try:
                t1, length = ks.pongs.get(timeout=10)
            except queue.Empty:
                bad = "ping %d: no pong within 10 s" % i
                break
            if length:
                bad = "ping %d: pong of %d bytes" % (i, length)
                break
            rtts.append((t1 - t0) * 1e6)
        ks.close()
        report(bad is None and len(rtts) == n, "ping-k2j",
               "%d of %d kernel pings to %s:0 answered by rds4j with an empty pong from port 0 (max %.0f us)%s"
               % (len(rtts), n, J_IP, max(rtts) if rtts else 0, "; " + bad if bad else ""))
        r = self.java.cmd("ping 5020 %s %d 10" % (K_IP, n), 120)
        report(num(r, "pongs") == n, "ping-j2k",
               "%s of %d rds4j pings to %s:0 answered by the kernel with an empty pong from port 0 (max %s us)%s"
               % (r.get("pongs"), n, K_IP, r.get("max_us"), "" if r.get("first") == "-" else "; " + r.get("first", r["line"])))

    # 3a. a kernel receiver that is not drained: ENOBUFS for rds4j's non-blocking sender, for that port only
    def check_congestion_j2k(self):
        run, msg = new_run(), 1024
        STATS.reset()
        cong = KSock(4010, rcvbuf=1, reader=False)  # the kernel's smallest receive buffer
        other = KSock(4011, reader=False)
        rcvbuf = cong.s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        src = (J_IP, 5012)
        r = self.java.cmd("congest 5012 %s:4010 %s:4011 %d %x 30" % (K_IP, K_IP, msg, run), 60)
        sent = num(r, "sent")
        other.expect(src, Pair(run, 1, msg, -1))
        other_got = other.drain(1, 10)
        # the undrained socket: everything rds4j sent before it saw the congestion update is queued there
        cong.expect(src, Pair(run, sent + 1, msg, -1))
        t0 = time.time()
        drained = cong.drain(sent, 20)
        r2 = self.java.cmd("uncongwait 5012 %s:4010 %d %x %d 30" % (K_IP, msg, run, sent), 60)
        last = cong.drain(1, 10)
        ok = (r.get("result") == "ENOBUFS" and sent > 0 and r.get("other") == "OK" and other_got == 1 and
              r.get("again") == "ENOBUFS" and drained == sent and r2.get("notified") == "true" and
              r2.get("result") == "OK" and last == 1 and STATS.bad() == 0)
        report(ok, "congestion-j2k",
               "kernel socket %s:4010 with SO_RCVBUF %d B, not read: rds4j's non-blocking sends of %d B got %s after %s "
               "messages (%s ms); meanwhile %s:4011 accepted (%s, received %d) and 4010 still refused (%s); after the "
               "kernel read the %d queued messages, rds4j was told uncongested (%s, %s ms after the drain began) and "
               "its next send to 4010 returned %s (received %d); order and content checked, errors %d (%s)"
               % (K_IP, rcvbuf, msg, r.get("result"), sent, r.get("ms"), K_IP, r.get("other"), other_got,
                  r.get("again"), drained, r2.get("notified"), "%.1f" % (num(r2, "at_ms") - t0 * 1e3), r2.get("result"),
                  last, STATS.bad(), STATS.first()))
        cong.close()
        other.close()

    # 3b. an rds4j receiver that is not drained: ENOBUFS (105) for the kernel's non-blocking sender
    def check_congestion_k2j(self):
        run, msg = new_run(), 1024
        java = self.java
        ks = KSock(4012, reader=False)
        java.cmd("reset")
        java.cmd("expect %x 1 %d -1 5011 %s:4012" % (run, msg, K_IP))
        held = java.cmd("hold 5010")
        n, err, t0 = 0, 0, time.time()
        while time.time() - t0 < 30:
            err = ks.try_send(payload(run, n, 4012, 5010, msg), (J_IP, 5010))
            if err == 0:
                n += 1
            elif err == errno.EAGAIN:
                time.sleep(0.005)
            else:
                break
        first_ms = (time.time() - t0) * 1e3
        other = ks.try_send(payload(run, 0, 4012, 5011, msg), (J_IP, 5011))
        again = ks.try_send(payload(run, n, 4012, 5010, msg), (J_IP, 5010))
        queued = java.cmd("queued 5010")
        java.cmd("expect %x %d %d -1 5010 %s:4012" % (run, n + 1, msg, K_IP))
        java.cmd("release 5010")
        t1 = time.time()
        freed = wait_until(lambda: ks.try_send(payload(run, n, 4012, 5010, msg), (J_IP, 5010)) == 0, 30, 0.005)
        freed_ms = (time.time() - t1) * 1e3
        r = java.cmd("recvwait 10 30", 60)
        ok = (err == errno.ENOBUFS and n > 0 and other == 0 and again == errno.ENOBUFS and freed and java_ok(r) and
              num(r, "got") == n + 2)
        report(ok, "congestion-k2j",
               "rds4j socket %s:5010 with SO_RCVBUF 16384 B, not read: the kernel's non-blocking sends of %d B got "
               "errno %d (%s) after %d messages (%.0f ms; rds4j had %s B queued); meanwhile %s:5011 accepted (errno %d) "
               "and 5010 still refused (errno %d); after rds4j read its socket the kernel's send to 5010 succeeded "
               "%.0f ms later; rds4j received %s of %d in order and byte-exact (%s)"
               % (J_IP, msg, err, errno.errorcode.get(err, "?"), n, first_ms, queued.get("bytes"), J_IP, other, again,
                  freed_ms, r.get("got"), n + 2, r.get("first", r["line"])))
        ks.close()

    # 4a. rds4j restarts: killed while it streams to the kernel, a new process at the same address
    def check_restart_rds4j(self):
        java = self.java
        run_a, run_b = new_run(), new_run()
        ports = ",".join(map(str, self.jports))
        count_a, count_b, mx = 30, 30, 64 << 10
        STATS.reset()
        # kernel -> rds4j: a stream that completes before the kill; rds4j -> kernel: one still running at the kill
        expect_all(self.kstream, run_a, 100000, mx, 0, [(J_IP, p) for p in self.jports])
        java.cmd("reset")
        java.cmd("expect %x %d %d 0 %s %s" % (run_a, count_a, mx, ports, addr_list(K_IP, self.kports)))
        senders = [Sender(ks, run_a, count_a, mx, 0, [(J_IP, p) for p in self.jports], 30) for ks in self.kstream]
        java.cmd("send %x %d %d 0 %s %s" % (run_a, 100000, mx, ports, addr_list(K_IP, self.kports)))
        k2j_a = java.cmd("recvwait 30 120", 150)
        # nothing of the kernel's may be unacknowledged by TCP at the kill (else the kernel would retransmit it
        # to the new process: see docs/interop.md)
        acked = wait_until(lambda: all(c[1] == 0 for c in tcp_connections()), 10)
        streaming = wait_until(lambda: progress(self.kstream)[0] >= 60, 60)
        before = progress(self.kstream)[0]
        java.kill()
        killed_at = time.time()
        # the old process's connection is gone once the kernel has seen the reset: nothing of it can arrive later
        gone = wait_until(lambda: not tcp_connections(), 30)
        gone_s = time.time() - killed_at
        # what the kernel received from the old process may still wait in its sockets' queues: read it all
        # before the new process starts, then expect only the new run
        for ks in self.kstream:
            ks.pause()
        queued = sum(ks.drain_queued() for ks in self.kstream)
        a_received = progress(self.kstream)[0]
        a_bad, a_first = STATS.bad(), STATS.first()
        STATS.reset()
        expect_all(self.kstream, run_b, count_b, mx, 0, [(J_IP, p) for p in self.jports])
        for ks in self.kstream:
            ks.resume()
        t_start = time.time()
        ready = self.start_java()
        java = self.java
        restart_s = time.time() - killed_at
        info("restart-rds4j: kernel TCP send queue empty before the kill: %s; rds4j->kernel streaming at the kill: %s; "
             "the kernel saw the old connection go %.1f s after the kill (%s), %d messages of the old process were "
             "then still queued in the kernel sockets; the new JVM took %.1f s to bind"
             % (bool(acked), bool(streaming), gone_s, "yes" if gone else "NOT", queued, time.time() - t_start))
        java.cmd("expect %x %d %d 0 %s %s" % (run_b, count_b, mx, ports, addr_list(K_IP, self.kports)))
        senders = [Sender(ks, run_b, count_b, mx, 0, [(J_IP, p) for p in self.jports], 30) for ks in self.kstream]
        java.cmd("send %x %d %d 0 %s %s" % (run_b, count_b, mx, ports, addr_list(K_IP, self.kports)))
        j2k = wait_received(self.kstream, 30, 120)
        k2j = java.cmd("recvwait 30 120", 150)
        want = 9 * count_b
        ok = (java_ok(k2j_a) and a_bad == 0 and ready.get("_") == "READY" and java_ok(k2j) and num(k2j, "got") == want
              and j2k[0] and j2k[1] == want and STATS.bad() == 0)
        report(ok, "restart-rds4j",
               "before: kernel->rds4j %s/%d delivered (%s), rds4j->kernel %d read by the kernel's application when rds4j "
               "was killed (SIGKILL) mid-stream, %d in order once the kernel had seen the reset and its sockets were read "
               "empty, errors %d (%s); a new rds4j "
               "process at %s was ready %.1f s after the kill; after: kernel->rds4j %s/%d, rds4j->kernel %d/%d, in "
               "order and byte-exact; messages of the old run delivered after the restart: to rds4j %s (+%s from "
               "unknown senders), to the kernel %d; errors rds4j %s, kernel %d (%s)"
               % (k2j_a.get("got"), 9 * count_a, k2j_a.get("first", k2j_a["line"]), before, a_received, a_bad, a_first,
                  J_IP, restart_s, k2j.get("got"), want, j2k[1], want, k2j.get("stale"), k2j.get("unexpected"),
                  STATS.stale, k2j.get("first", k2j["line"]), STATS.bad(), STATS.first()))

    # 4b. the kernel node restarts: its sockets closed, rds_tcp unloaded and loaded again
    def check_restart_kernel(self):
        java = self.java
        run_a, run_b = new_run(), new_run()
        count, mx = 30, 64 << 10
        k2j_a, j2k_a, senders, sent, _, _ = self.streams("restart-kernel", run_a, count, mx, 0, 30, 120)
        a_ok = java_ok(k2j_a) and j2k_a[0] and STATS.bad() == 0
        unacked = wait_until(lambda: (lambda u: u if u[0] == 0 else None)(unacked_to_kernel(java)), 5, 0.2) \
            or unacked_to_kernel(java)
        resets = num(java.cmd("counters"), "conn_reset")
        self.close_kernel()
        # a closed socket goes away when no thread is inside a call on it any more: wait for no user of rds_tcp
        wait_until(lambda: open("/sys/module/rds_tcp/refcnt").read().strip() == "0", 10)
        rc1, out1 = sh("rmmod", "rds_tcp")
        rc2, out2 = sh("modprobe", "rds_tcp")
        self.open_kernel()
        k2j, j2k, senders, sent, _, secs = self.streams("restart-kernel", run_b, count, mx, 0, 30, 120)
        resets2 = num(java.cmd("counters"), "conn_reset")
        want = 9 * count
        ok = (a_ok and rc1 == 0 and rc2 == 0 and java_ok(k2j) and num(k2j, "got") == want and j2k[0] and
              j2k[1] == want and STATS.bad() == 0 and num(sent, "errors") == 0)
        report(ok, "restart-kernel",
               "before: %d messages each way delivered (%s); rds4j held %d unacked for the kernel; kernel sockets "
               "closed, rmmod rds_tcp (rc %d%s), modprobe rds_tcp (rc %d%s), sockets bound again: rds4j saw %d "
               "connection reset(s); after: kernel->rds4j %s/%d, rds4j->kernel %d/%d in order and byte-exact; "
               "messages of the old run delivered after the restart: to the kernel %d, to rds4j %s; errors rds4j %s "
               "(%s), kernel %d (%s)"
               % (want, "ok" if a_ok else "NOT: %s / %s" % (k2j_a["line"], STATS.first()), unacked[0], rc1,
                  " " + out1.strip() if out1.strip() else "", rc2, " " + out2.strip() if out2.strip() else "",
                  resets2 - resets, k2j.get("got"), want, j2k[1], want, STATS.stale, k2j.get("stale"),
                  num(k2j, "lost") + num(k2j, "dup") + num(k2j, "corrupt") + num(k2j, "unexpected"),
                  k2j.get("first", k2j["line"]), STATS.bad(), STATS.first()))

    # 5. connection resets while both directions stream
    def check_resets(self):
        java = self.java
        # long enough that the eight rounds (about 5 s, the stopped ones about 1 s each) fit inside the faster
        # direction's stream: with 1500 per pair, rds4j's stream to the kernel sometimes ended before the last rounds
        count, mx, big = 3000, 256 << 10, 50
        kill_k = ["ss", "-K", "-Htn", "state", "established", "dst", J_IP]
        kill_j = ["ip", "netns", "exec", J_NS] + kill_k[:-1] + [K_IP]
        names = {id(kill_k): "ss -K in the kernel namespace", id(kill_j): "ss -K in the rds4j namespace"}
        # (resets one after the other, mode): plain; paused: the rds4j process stopped (SIGSTOP, as in a long GC
        # pause) from before the reset until the kernel has connected again; flap: the second reset as soon as
        # the kernel has a new connection, before rds4j may have seen it
        actions = [([kill_k], "plain"), ([kill_j], "plain"), (["4194304"], "plain"),
                   ([kill_j], "paused"), ([kill_k], "paused"), (["2097152"], "paused"),
                   ([kill_k, kill_j], "flap"), (["4194304", kill_k], "flap")]
        want_total = 2 * 9 * count  # both directions
        log, times, streaming = [], [], []
        before = num(java.cmd("counters"), "conn_reset")

        def reset(cmd):
            if isinstance(cmd, list):
                rc, out = sh(*cmd)
                lines = [l for l in out.splitlines() if l.strip()]
                # ss prints each socket it killed: Recv-Q Send-Q local peer (the queues at the kill)
                queues = ", ".join("Recv-Q %s Send-Q %s" % tuple(l.split()[:2]) for l in lines)
                return "%s: rc %d, %d socket(s) killed (%s)" % (names[id(cmd)], rc, len(lines), queues)
            try:
                with open("/proc/sys/net/rds/tcp/rds_tcp_sndbuf", "w") as f:
                    f.write(cmd)
                return "sysctl net.rds.tcp.rds_tcp_sndbuf=%s: written" % cmd
            except OSError as e:
                return "sysctl net.rds.tcp.rds_tcp_sndbuf=%s: %s" % (cmd, e)

        def during():
            pid = java.p.pid
            for i, (cmds, mode) in enumerate(actions):
                # round i once the faster direction has received i/11 of its stream, rds4j's connection is up and
                # the kernel has one. Pacing by the faster direction keeps both streaming at every round: the other
                # is behind it (rds4j's sender outruns the kernel's Python senders several times over, and would
                # finish before the last rounds if they waited for the slower one). A round with rds4j stopped takes
                # about a second.
                goal = want_total // 2 * (i + 1) // (len(actions) + 3)

                def reached():
                    return (max(progress(self.kstream)[0], num(java.cmd("progress", 10), "got", 0)) >= goal and
                            tcp_connections() and java_state(java) == "UP")
                if not wait_until(reached, 60, 0.01):
                    log.append("reset %d: not done, the streams stalled below %d messages" % (i + 1, goal))
                    return log
                jp = java.cmd("progress", 10)
                k2j_got, j2k_got = num(jp, "got"), progress(self.kstream)[0]
                streaming.append(k2j_got < want_total // 2 and j2k_got < want_total // 2)
                traffic = ("kernel->rds4j %d sent, %d received; rds4j->kernel %s sent, %d received"
                           % (sum(x.sent for x in self.senders), k2j_got, jp.get("sent"), j2k_got))
                if mode == "paused":
                    os.kill(pid, signal.SIGSTOP)
                # bytes TCP has acked and rds4j has not read (the kernel counts them as delivered)
                unread = unread_in_rds4j(pid)
                times.append(time.time())
                done = []
                for cmd in cmds:
                    old = [c[0] for c in tcp_connections()]
                    done.append(reset(cmd))
                    if mode == "paused" or (mode == "flap" and cmd is not cmds[-1]):
                        # until the kernel has connected again (a new local port): in a pause, before SIGCONT
                        again = wait_until(lambda: [c for c in tcp_connections() if c[0] not in old], 2, 0.002)
                        done.append("the kernel connected again: %s" % ("yes" if again else "no, within 2 s"))
                if mode == "paused":
                    os.kill(pid, signal.SIGCONT)
                log.append("%s at %d (%s UTC, %s, %d B unread by rds4j%s): %s"
                           % (mode, goal, utc(times[-1]), traffic, unread,
                              ", rds4j stopped until the kernel had connected again" if mode == "paused" else "",
                              "; ".join(done)))
            return log

        k2j, j2k, senders, sent, _, secs = self.streams("reset", new_run(), count, mx, big, 30, 300, during)
        after = num(java.cmd("counters"), "conn_reset")
        # each reset: what rds4j logged when its connection went down, and the kernel->rds4j messages lost in
        # it: a gap belongs to the first reset after the kernel sent its first missing message
        downs = rds4j_downs(os.path.join(self.a.dir, "rds4j.log"))
        # (a gap: messages missing before one that arrived; missing: the end of a stream that never arrived)
        sent_at = {(s.ks.port, d): at for s in senders for d, at in s.sent_at.items()}
        lost, tail = [0] * (len(times) + 1), [0] * (len(times) + 1)

        def reset_of(sport, dport, idx):
            at = sent_at.get((sport, dport), [])
            t = at[idx] if idx < len(at) else float("inf")
            return sum(1 for u in times if u < t)  # 0: the first reset, len(times): after the last
        for g in k2j.get("gaps", "-").split(","):
            f = g.split(":")
            if len(f) == 5:
                lost[reset_of(int(f[2]), int(f[3]), int(f[4]))] += int(f[1])
        for m in k2j.get("missing", "-").split(","):
            f = m.split(":")
            if len(f) == 4:
                tail[reset_of(int(f[0]), int(f[1]), int(f[2]))] += int(f[3]) - int(f[2])
        for i, t in enumerate(times):
            end = times[i + 1] if i + 1 < len(times) else float("inf")
            why = [d for (u, d) in downs if t <= u < end]
            info("reset %d, %s; rds4j logged %s; kernel->rds4j messages lost, counted at the first reset after the "
                 "kernel's application sent the first of them: %d, and %d more at the end of their streams that never "
                 "arrived"
                 % (i + 1, log[i] if i < len(log) else "?", "; ".join("'" + d + "'" for d in why) or "nothing",
                    lost[i], tail[i]))
        if lost[-1] or tail[-1]:
            info("kernel->rds4j messages sent after the last reset and lost: %d, never arrived: %d" % (lost[-1], tail[-1]))
        parts = [p for l in log for p in l.split(": ", 1)[-1].split("; ") if "killed" in p or "sysctl" in p]
        done = [p for p in parts if ": rc 0, 1 socket(s) killed" in p or p.endswith(": written")]
        want = sum(len(c) for c, _ in actions)
        self.stream_lines("reset", count, mx, k2j, j2k, senders, sent, secs)
        report(len(done) == want and after - before >= len(actions) and all(streaming), "reset-actions",
               "%d of %d resets done in %d rounds, %d of them while both directions were still streaming; rds4j "
               "counted %d connection resets: %s"
               % (len(done), want, len(actions), sum(streaming), after - before, " | ".join(log)))

    # a fact of the kernel that rds4j must respect: a frame with sequence 0 moves its next expected sequence back
    def check_kernel_seq0(self):
        ks = KSock(4030, reader=False)
        p = subprocess.Popen(["ip", "netns", "exec", RAW_NS, sys.executable, os.path.abspath(__file__), "rawpeer",
                              "4030"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        started = p.stdout.readline().strip()
        got, end = [], time.time() + 10
        while len(got) < 6 and time.time() < end:
            try:
                n, sender = ks.s.recvfrom_into(ks.buf)
            except (TimeoutError, socket.timeout):
                if len(got) >= 5:
                    break  # five in, and the sixth (the dropped control) has had its chance
                continue
            got.append(bytes(ks.buf[:n]).decode())
        p.stdin.close()
        p.wait(10)
        ks.close()
        ok = started == "SENT" and got == ["a", "b", "b", "c", "c"]
        report(ok, "kernel-seq0",
               "kernel %s, frames from a raw peer: seq 1 'a', seq 2 'b', seq 2 'b' retransmitted (expected to be "
               "dropped), an ack-only frame (seq 0), seq 2 'b' retransmitted, seq 3 'c', an unsequenced probe (seq 0), "
               "seq 3 'c' retransmitted; delivered: %s. So every frame with sequence 0 moves the kernel's next expected "
               "sequence back to 1, and a retransmission it already delivered is delivered again: rds4j must send "
               "no frame with sequence 0 (no ack-only frame, no unsequenced probe) to a kernel peer that may still "
               "get retransmissions of what it has"
               % (os.uname().release, " ".join(repr(g) for g in got) or "nothing"))

    def check_no_seq0_frames(self):
        c = self.java.cmd("counters")
        acks, probes, ups = num(c, "send_ack_only"), num(c, "send_probe"), num(c, "conn_up")
        report(acks == 0, "no-seq0-to-kernel",
               "ack-only frames (sequence 0) rds4j sent to the kernel peer since this rds4j process started: %d, over "
               "%d connections; each makes the kernel deliver again the retransmissions of what it already has "
               "(kernel-seq0). Unsequenced handshake probes: %d (sent only until rds4j knows the peer is a kernel, "
               "before any data: harmless)" % (acks, ups, probes))

    def run(self):
        global BLOCK
        BLOCK = os.urandom((2 << 20) + 64)
        with open(os.path.join(self.a.dir, "block.bin"), "wb") as f:
            f.write(BLOCK)
        ready = self.start_java()
        if ready.get("_") != "READY":
            report(False, "start", "the rds4j driver did not start: %s" % ready["line"])
            return 1
        self.open_kernel()
        steps = [self.check_kernel_seq0, self.check_streams, self.check_pings, self.check_congestion_j2k,
                 self.check_congestion_k2j, self.check_restart_kernel]
        if not self.smoke:
            steps += [self.check_restart_rds4j, self.check_resets, self.check_no_seq0_frames]
        if self.a.checks:  # a subset, by name (streams, pings, congestion_j2k, ...): for work on one check
            steps = [getattr(self, "check_" + c) for c in self.a.checks.split(",")]
        for step in steps:
            t0 = time.time()
            try:
                step()
            except Exception as e:  # a broken check must not hide the others
                report(False, step.__name__, "raised %r" % e)
            info("(%s: %.1f s)" % (step.__name__, time.time() - t0))
        c = self.java.cmd("counters")
        info("rds4j counters: " + c["line"])
        self.java.quit()
        for f in self.figures:
            info("figure: " + f)
        return 1 if failures else 0


# ---------------------------------------------------------------- a raw RDS-over-TCP peer (kernel facts)

RAW_IP, RAW_NS = "10.0.0.9", "rds4j-raw"  # below K_IP, so the kernel takes its connection as the path


def frame(seq, sport, dport, payload=b"", flags=0, ack=0):
    """An RDS frame as on TCP: the 48-byte header (seq, ack, len, sport, dport, flags, credit, padding, csum, 16
    bytes of extension headers; big-endian, checksum 0 as the kernel's TCP transport), then the payload."""
    return struct.pack(">QQIHHBB4sH16s", seq, ack, len(payload), sport, dport, flags, 0, b"", 0, b"") + payload


RETRANSMITTED, CONG_BITMAP = 0x04, 0x01


def rawpeer(dport):
    """Runs in RAW_NS: connects to the kernel's rds_tcp from RAW_IP and sends, after the congestion map, data
    frames to K_IP:dport: seq 1 'a'; seq 2 'b'; seq 2 'b' RETRANSMITTED (below the next expected: dropped);
    an ack-only frame (seq 0); seq 2 'b' RETRANSMITTED again; seq 3 'c'; an unsequenced probe (seq 0, port 1 to
    port 0, as rds4j's handshake probe); seq 3 'c' RETRANSMITTED. Keeps the connection until stdin closes."""
    s = socket.socket()
    s.bind((RAW_IP, 0))
    s.connect((K_IP, 16385))
    sport = 7000
    s.sendall(frame(0, 0, 0, bytes(8192), CONG_BITMAP) +
              frame(1, sport, dport, b"a") + frame(2, sport, dport, b"b") +
              frame(2, sport, dport, b"b", RETRANSMITTED) +
              frame(0, 0, 0) +
              frame(2, sport, dport, b"b", RETRANSMITTED) +
              frame(3, sport, dport, b"c") +
              frame(0, 1, 0) +
              frame(3, sport, dport, b"c", RETRANSMITTED))
    print("SENT", flush=True)
    sys.stdin.read()
    s.close()
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "rawpeer":
        return rawpeer(int(sys.argv[2]))
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["suite"])
    ap.add_argument("--java", required=True)
    ap.add_argument("--classpath", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--checks", help="only these checks, comma-separated (e.g. resets,restart_rds4j)")
    a = ap.parse_args()
    # the rds4j sockets' send buffer: 2 MiB, far less than a stream, so the streams need rds4j to release what
    # the kernel has (the kernel sends no RDS acks: what its TCP acked counts as delivered)
    sndbuf = 2 << 20
    a.java_cmd = [a.java, "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=debug",
                  "-Dorg.slf4j.simpleLogger.showDateTime=true",
                  "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS Z", "-cp", a.classpath, "InteropDriver",
                  "--local", J_IP, "--tcp-port", str(TCP_PORT_J), "--block", os.path.join(a.dir, "block.bin"),
                  "--sndbuf", str(sndbuf)]
    for p in (5000, 5001, 5002, 5011, 5012, 5020):
        a.java_cmd += ["--socket", str(p)]
    a.java_cmd += ["--socket", "5010:16384"]
    return Suite(a).run()


if __name__ == "__main__":
    sys.exit(main())
