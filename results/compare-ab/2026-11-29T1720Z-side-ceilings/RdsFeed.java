import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

// RdsFeed SIZE SECS: an ideal RDS/TCP sender (frames written once, whole, into a 4 MiB log, sent 256 KiB at a time
// with copying writes) from 127.0.0.1 to an rds4j stack on 127.0.0.2:20110, port 20080 to 20080. It sends a probe
// with a generation first (as rds4j does), then sequenced data frames whose payload starts with a message number;
// what the stack sends back (acks among it) is read and dropped.
public class RdsFeed {
    public static void main(String[] a) throws Exception {
        final int size = Integer.parseInt(a[0]); final long secs = Long.parseLong(a[1]);
        final int LOG = 4 << 20, BATCH = Integer.getInteger("batch.kib", 256) << 10, H = 48, frame = H + size;
        final ByteBuffer m = ByteBuffer.allocateDirect(LOG).order(ByteOrder.BIG_ENDIAN);
        SocketChannel ch = null;
        for (int i = 0; i < 200 && ch == null; i++) {
            try { final SocketChannel c = SocketChannel.open(); c.bind(new InetSocketAddress("127.0.0.1", 0));
                c.connect(new InetSocketAddress("127.0.0.2", 20110)); ch = c; } catch (Exception e) { Thread.sleep(50); }
        }
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        // a probe with a generation, as rds4j's: the stack takes this peer for one that acks, and acks as it would
        final ByteBuffer probe = ByteBuffer.allocateDirect(H);
        final org.agrona.concurrent.UnsafeBuffer p = new org.agrona.concurrent.UnsafeBuffer(probe);
        org.rds4j.core.wire.RdsHeader.write(p, 0, 0, 0, 0, org.rds4j.core.wire.RdsHeader.PROBE_PORT, 0, 0, 0);
        org.rds4j.core.wire.RdsHeader.writeHandshakeExtensions(p, 0, 1, 0xfeed);
        while (probe.hasRemaining()) ch.write(probe);
        final ByteBuffer drain = ByteBuffer.allocateDirect(1 << 16);
        final SocketChannel rch = ch;
        // what the stack sends back (its congestion map, probe, a pong) is read and dropped
        final Thread r = new Thread(() -> { try { while (rch.read(drain.clear()) >= 0) { } } catch (Exception e) { } });
        r.setDaemon(true); r.start();
        final ByteBuffer payload = ByteBuffer.allocateDirect(size);
        long seq = 1, tail = 0, sent = 0; int check = 0;
        final long end = System.nanoTime() + secs * 1_000_000_000L;
        while (true) {
            final int at = (int) (tail % LOG);
            payload.putLong(0, seq - 1);
            m.putLong(at, seq); m.putLong(at + 8, 0L); m.putInt(at + 16, size);
            m.putShort(at + 20, (short) 20080); m.putShort(at + 22, (short) 20080);
            m.putLong(at + 24, 0L); m.putLong(at + 32, 0L); m.putLong(at + 40, 0L);
            m.put(at + H, payload, 0, size);
            seq++; tail += frame;
            final boolean wrap = (int) (tail % LOG) + frame > LOG;
            if (tail - sent >= BATCH || wrap) {
                final ByteBuffer range = m.slice((int) (sent % LOG), (int) (tail - sent));
                try { while (range.hasRemaining()) ch.write(range); }
                catch (java.io.IOException e) { break; } // the sink's run ended and it closed
                sent = tail;
                if (wrap) { tail += LOG - (int) (tail % LOG); sent = tail; }
                if ((++check & 15) == 0 && System.nanoTime() > end) break;
            }
        }
        ch.close();
    }
}
