import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

// RdsDrain SECS: an ideal RDS/TCP receiver on 127.0.0.2:20110 for an rds4j source on 127.0.0.1. It answers the
// handshake with a probe carrying a generation, counts the data frames to port 20080 and checks that their payloads'
// message numbers follow on, and acks (an ack-only frame) after every read that took a frame asking for an ack or
// 256 KiB since the last ack. Prints the messages of each second and the median rate of seconds 3 to SECS-1.
public class RdsDrain {
    public static void main(String[] a) throws Exception {
        final int secs = Integer.parseInt(a[0]);
        final ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.2", 20110));
        System.out.println("READY"); System.out.flush();
        final SocketChannel ch = server.accept();
        ch.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
        final ByteBuffer out = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
        final UnsafeBuffer o = new UnsafeBuffer(out);
        RdsHeader.write(o, 0, 0, 0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
        RdsHeader.writeHandshakeExtensions(o, 0, 1, 0x5eed);
        write(ch, out);
        final ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
        final UnsafeBuffer b = new UnsafeBuffer(in);
        long count = 0, lastSeq = 0, errors = 0, expected = -1, sinceAck = 0, txSeq = 1;
        final long[] perSecond = new long[secs + 8];
        final long start = System.nanoTime();
        int second = 0;
        while (second < perSecond.length - 1) {
            final int n = ch.read(in);
            if (n < 0) break;
            sinceAck += n;
            boolean ackRequired = false;
            int at = 0; final int end = in.position();
            while (end - at >= RdsHeader.LENGTH) {
                final int len = (int) RdsHeader.length(b, at);
                if (end - at < RdsHeader.LENGTH + len) break;
                final long seq = RdsHeader.sequence(b, at);
                final int flags = RdsHeader.flags(b, at);
                if (seq != 0) lastSeq = seq;
                if ((flags & RdsHeader.FLAG_ACK_REQUIRED) != 0) ackRequired = true;
                final int sport = RdsHeader.sport(b, at), dport = RdsHeader.dport(b, at);
                if (seq != 0 && sport == RdsHeader.PROBE_PORT && dport == 0) {
                    RdsHeader.write(o, 0, txSeq++, lastSeq, 0, 0, RdsHeader.PROBE_PORT, 0, 0); write(ch, out); // pong
                } else if (dport == 20080 && len >= 8) {
                    final long m = b.getLong(at + RdsHeader.LENGTH, ByteOrder.BIG_ENDIAN);
                    if (expected >= 0 && m != expected) errors++;
                    expected = m + 1; count++;
                }
                at += RdsHeader.LENGTH + len;
            }
            in.limit(end).position(at); in.compact();
            if (ackRequired || sinceAck >= 256 << 10) {
                RdsHeader.write(o, 0, 0, lastSeq, 0, 0, 0, 0, 0); write(ch, out); sinceAck = 0;
            }
            final int s = (int) ((System.nanoTime() - start) / 1_000_000_000L);
            if (s > second) { perSecond[second] = count; second = s; }
        }
        final long[] rates = new long[Math.max(1, secs - 3)];
        for (int i = 3; i < secs && i - 3 < rates.length; i++) rates[i - 3] = perSecond[i] - perSecond[i - 1];
        java.util.Arrays.sort(rates);
        System.out.println("per_second_cumulative " + java.util.Arrays.toString(perSecond));
        System.out.println("\"msgs_per_s\":" + rates[rates.length / 2] + " \"seq_errors\":" + errors);
    }
    static void write(SocketChannel ch, ByteBuffer out) throws Exception {
        out.clear(); while (out.hasRemaining()) ch.write(out);
    }
}
