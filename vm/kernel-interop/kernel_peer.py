#!/usr/bin/env python3
"""The kernel side of vm/kernel-interop-test.sh: an AF_RDS socket (kernel RDS over TCP) that talks to an rds4j
node. Exit status 0 only if every check passed; one line per check on stdout.

  kernel_peer.py echo LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT COUNT   sends COUNT messages of growing size to an
      rds4j `rds echo` and checks that every echo comes back, in order, byte for byte.
  kernel_peer.py ping LOCAL_IP LOCAL_PORT PEER_IP COUNT               pings port 0 of the rds4j node and checks
      that each pong is empty and comes from port 0.
"""
import socket
import sys
import time

SOL_RDS = 276
SO_RDS_TRANSPORT = 8
RDS_TRANS_TCP = 2


def rds_socket(ip, port, timeout):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_TCP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.bind((ip, port))
    s.settimeout(timeout)
    return s


def payload(i):
    # sizes 0 .. about 64 KiB, contents that depend on the index
    size = (i * 997) % 65536 if i else 0
    return bytes((i + j) & 0xFF for j in range(size))


def echo(local_ip, local_port, peer_ip, peer_port, count):
    # blocking sends: the kernel waits while rds4j's port is congested (non-blocking, it would be ENOBUFS);
    # at most WINDOW messages are outstanding, so that neither side's receive buffer fills while its reader
    # is itself blocked in a send
    s = rds_socket(local_ip, int(local_port), None)
    s.settimeout(None)
    dest = (peer_ip, int(peer_port))
    window = 8
    t0 = time.time()
    received = 0
    for i in range(int(count) + window):
        if i < int(count):
            s.sendto(payload(i), dest)
        if i >= window or i >= int(count):
            if received >= int(count):
                break
            data, sender = s.recvfrom(1 << 20)
            if sender != dest or data != payload(received):
                print("FAIL echo: message %d: %d bytes from %s, expected %d bytes from %s"
                      % (received, len(data), sender, len(payload(received)), dest))
                return 1
            received += 1
    while received < int(count):
        data, sender = s.recvfrom(1 << 20)
        if sender != dest or data != payload(received):
            print("FAIL echo: message %d: %d bytes from %s" % (received, len(data), sender))
            return 1
        received += 1
    largest = max(len(payload(i)) for i in range(int(count)))
    print("PASS echo: %s messages (0 to %d bytes) from the kernel to rds4j and back, in order, in %.2f s"
          % (count, largest, time.time() - t0))
    return 0


def ping(local_ip, local_port, peer_ip, count):
    s = rds_socket(local_ip, int(local_port), 30)
    for i in range(int(count)):
        t0 = time.time()
        s.sendto(b"", (peer_ip, 0))
        data, sender = s.recvfrom(100)
        if sender != (peer_ip, 0) or data:
            print("FAIL ping: pong %d was %d bytes from %s" % (i, len(data), sender))
            return 1
        print("ping %d: pong from %s in %.0f us" % (i, sender, (time.time() - t0) * 1e6))
    print("PASS ping: %s kernel pings answered by rds4j from port 0" % count)
    return 0


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    sys.exit(echo(*args) if mode == "echo" else ping(*args))
