#!/usr/bin/env python3
"""The kernel side of vm/kernel-interop-ib.sh: AF_RDS sockets forced onto kernel RDS over IB (rds_rdma) that talk
to an rds4j node. One PASS/FAIL line per check on stdout; exit status 0 only if every check passed.

  kernel_ib_peer.py echo LOCAL_IP PORT[,PORT...] SECONDS
      binds each port and sends every message received back to its sender until SECONDS pass with nothing
      received (after the first message) or 4*SECONDS pass in all; prints how many it echoed per port.
  kernel_ib_peer.py client LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT ROUNDS SIZE[,SIZE...]
      sends ROUNDS rounds of messages of the given sizes to an rds4j echo (a window of 4 outstanding) and checks
      every echo: its sender, its order and its bytes.
  kernel_ib_peer.py ping LOCAL_IP LOCAL_PORT PEER_IP COUNT
      pings port 0 of the rds4j node: each pong must be empty and come from port 0.
  kernel_ib_peer.py source LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT TAG COUNT SIZE[,SIZE...]
      sends COUNT messages payload(TAG, i, size) to an rds4j sink with blocking sends (a send waits while the
      kernel's send buffer is full, until rds4j's acks free it, and while rds4j's port is congested), then waits
      (at most 60 s) until none of them is left in the kernel's send or retransmit queues: rds4j acked them all.
  kernel_ib_peer.py counters [NAME-PREFIX...]
      prints the kernel's RDS counters (RDS_INFO_COUNTERS, as rds-info -c) that are not 0, or those named.
  kernel_ib_peer.py sink LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT TAG COUNT SIZE[,SIZE...]
      receives COUNT messages from PEER_IP:PEER_PORT and checks their order and bytes (payload(TAG, i, size)).
"""
import select
import socket
import sys
import time

SOL_RDS = 276
RDS_INFO_COUNTERS = 10000
RDS_INFO_SEND_MESSAGES = 10003
RDS_INFO_RETRANS_MESSAGES = 10004
SO_RDS_TRANSPORT = 8
RDS_TRANS_IB = 0
MAX = 1 << 20
# payload(tag, i, size): bytes (tag * 31 + i * 7 + j) & 0xFF for j in 0..size-1 (Driver.java makes the same)
BASE = bytes(range(256)) * (MAX // 256 + 2)


def payload(tag, i, size):
    start = (tag * 31 + i * 7) & 0xFF
    return BASE[start:start + size]


def rds_socket(ip, port, timeout=None):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 << 20)
    s.bind((ip, int(port)))
    s.settimeout(timeout)
    return s


def echo(local_ip, ports, seconds):
    seconds = float(seconds)
    socks = [rds_socket(local_ip, p, 0) for p in ports.split(",")]
    for s in socks:
        s.setblocking(False)
    counts = {s.getsockname()[1]: 0 for s in socks}
    print("kernel echo: bound to %s ports %s over IB" % (local_ip, ports), flush=True)
    start = last = time.time()
    while True:
        now = time.time()
        if now - start > 4 * seconds or (sum(counts.values()) > 0 and now - last > seconds):
            break
        ready, _, _ = select.select(socks, [], [], 0.5)
        for s in ready:
            while True:
                try:
                    data, sender = s.recvfrom(MAX)
                except BlockingIOError:
                    break
                last = time.time()
                while True:
                    try:
                        s.sendto(data, sender)
                        break
                    except (BlockingIOError, OSError) as e:  # ENOBUFS: the peer's port is congested
                        if getattr(e, "errno", 0) not in (11, 105):
                            raise
                        time.sleep(0.005)
                counts[s.getsockname()[1]] += 1
    print("kernel echo: echoed %s" % ", ".join("%d on port %d" % (n, p) for p, n in sorted(counts.items())),
          flush=True)
    return 0


def client(local_ip, local_port, peer_ip, peer_port, rounds, sizes):
    s = rds_socket(local_ip, local_port, 60)
    dest = (peer_ip, int(peer_port))
    sizes = [int(x) for x in sizes.split(",")]
    total = int(rounds) * len(sizes)
    expect = [payload(int(local_port), i, sizes[i % len(sizes)]) for i in range(total)]
    window, sent, received, nbytes, refused = 4, 0, 0, 0, 0
    t0 = time.time()
    try:
        while received < total:
            while sent < total and sent - received < window:
                try:
                    s.sendto(expect[sent], dest)
                except OSError as e:
                    # the socket has a timeout, so it is non-blocking underneath: a port rds4j marked congested
                    # (its receive queue is over SO_RCVBUF) gives ENOBUFS; wait for rds4j's map to clear it
                    if e.errno not in (11, 105) or time.time() - t0 > 120:
                        raise
                    refused += 1
                    time.sleep(0.01)
                    continue
                sent += 1
            data, sender = s.recvfrom(MAX)
            if sender != dest or data != expect[received]:
                print("FAIL kernel->rds4j echo %s: message %d: %d bytes from %s, expected %d bytes from %s%s"
                      % (local_port, received, len(data), sender, len(expect[received]), dest,
                         "" if len(data) != len(expect[received]) else " (content differs)"))
                return 1
            nbytes += len(data)
            received += 1
    except socket.timeout:
        print("FAIL kernel->rds4j echo %s: timed out after %d of %d echoes (%d sent)" % (local_port, received, total, sent))
        return 1
    print("PASS kernel->rds4j echo %s: %d messages (%s bytes, %d bytes in all) from the kernel to rds4j and back, "
          "in order, byte for byte, in %.1f s%s" % (local_port, total, "/".join(str(x) for x in sizes), nbytes,
                                                    time.time() - t0,
                                                    "; %d sends refused with ENOBUFS while rds4j's port was "
                                                    "congested" % refused if refused else ""))
    return 0


def ping(local_ip, local_port, peer_ip, count):
    s = rds_socket(local_ip, local_port, 30)
    for i in range(int(count)):
        t0 = time.time()
        s.sendto(b"", (peer_ip, 0))
        try:
            data, sender = s.recvfrom(100)
        except socket.timeout:
            print("FAIL kernel ping: no pong %d within 30 s" % i)
            return 1
        if sender != (peer_ip, 0) or data:
            print("FAIL kernel ping: pong %d was %d bytes from %s" % (i, len(data), sender))
            return 1
        print("kernel ping %d: pong from %s in %.0f us" % (i, sender, (time.time() - t0) * 1e6))
    print("PASS kernel ping: %s pings from a kernel socket to port 0 of rds4j over IB, each answered by an empty "
          "pong from port 0" % count)
    return 0


def sink(local_ip, local_port, peer_ip, peer_port, tag, count, sizes):
    s = rds_socket(local_ip, local_port, 60)
    src = (peer_ip, int(peer_port))
    sizes = [int(x) for x in sizes.split(",")]
    t0, nbytes = time.time(), 0
    for i in range(int(count)):
        try:
            data, sender = s.recvfrom(MAX)
        except socket.timeout:
            print("FAIL rds4j->kernel %s: timed out after %d of %s messages" % (local_port, i, count))
            return 1
        want = payload(int(tag), i, sizes[i % len(sizes)])
        if sender != src or data != want:
            print("FAIL rds4j->kernel %s: message %d: %d bytes from %s, expected %d bytes from %s"
                  % (local_port, i, len(data), sender, len(want), src))
            return 1
        nbytes += len(data)
    print("PASS rds4j->kernel stream %s: %s messages, %d bytes (over rds4j's 16 MiB send buffer: only the kernel's "
          "RDS acks free it) from rds4j, in order, byte for byte, in %.1f s" % (local_port, count, nbytes,
                                                                             time.time() - t0))
    return 0


def source(local_ip, local_port, peer_ip, peer_port, tag, count, sizes):
    s = rds_socket(local_ip, local_port, None)
    dest = (peer_ip, int(peer_port))
    sizes = [int(x) for x in sizes.split(",")]
    t0, nbytes = time.time(), 0
    for i in range(int(count)):
        data = payload(int(tag), i, sizes[i % len(sizes)])
        s.sendto(data, dest)
        nbytes += len(data)
    print("kernel source: %s messages, %d bytes sent to rds4j in %.1f s" % (count, nbytes, time.time() - t0),
          flush=True)
    # closing the socket would drop what rds4j has not acked yet: wait until the kernel holds none of it
    deadline = time.time() + 60
    while True:
        held = queued_messages(s, int(local_port), int(peer_port))
        if held == 0:
            print("kernel source: rds4j acked all %s messages (%.1f s after the first send)"
                  % (count, time.time() - t0), flush=True)
            return 0
        if time.time() > deadline:
            print("FAIL kernel source: %d messages still unacked by rds4j 60 s after the last send" % held, flush=True)
            return 1
        time.sleep(0.05)


def rds_info(s, optname):
    """One RDS_INFO_* snapshot through socket s: (item size, raw bytes of the items)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    size = 1 << 20
    buf = ctypes.create_string_buffer(size)
    length = ctypes.c_int(size)
    # returns the size of one item; the length comes back as the bytes copied (nr * each)
    each = libc.getsockopt(s.fileno(), SOL_RDS, optname, buf, ctypes.byref(length))
    if each < 0:
        raise OSError(ctypes.get_errno(), "getsockopt(SOL_RDS, %d)" % optname)
    return each, buf.raw[:length.value]


def queued_messages(s, local_port, peer_port):
    """Messages from local_port to peer_port in the kernel's send queues and retransmit (sent, unacked) queues."""
    import struct
    held = 0
    for optname in (RDS_INFO_SEND_MESSAGES, RDS_INFO_RETRANS_MESSAGES):
        each, raw = rds_info(s, optname)
        for off in range(0, len(raw) - each + 1, each):
            # struct rds_info_message (packed): u64 seq, u32 len, be32 laddr, be32 faddr, be16 lport, be16 fport, ...
            # Only the ports are matched: kernel 6.1 fills laddr/faddr with the first word of its IPv6-mapped
            # addresses, 0.0.0.0.
            lport, fport = struct.unpack_from("!HH", raw, off + 20)
            if lport == local_port and fport == peer_port:
                held += 1
    return held


def counters(*prefixes):
    import struct
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    try:
        each, raw = rds_info(s, RDS_INFO_COUNTERS)
    except OSError as e:
        print("counters: %s" % e)
        return 1
    # items are struct rds_info_counter { u8 name[32]; u64 value; } (packed: 40 bytes)
    values = {}
    for off in range(0, len(raw) - each + 1, each):
        name, value = struct.unpack_from("=32sQ", raw, off)
        values[name.rstrip(b"\0").decode()] = value
    shown = [(k, v) for k, v in values.items() if (v and not prefixes) or any(k.startswith(p) for p in prefixes)]
    print("kernel counters: " + ", ".join("%s %d" % kv for kv in shown), flush=True)
    return 0


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    sys.exit({"echo": echo, "client": client, "ping": ping, "sink": sink, "source": source, "counters": counters}[mode](*args))
