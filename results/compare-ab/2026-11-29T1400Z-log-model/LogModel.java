import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.StandardSocketOptions;
import java.util.concurrent.atomic.AtomicLong;

// LogModel HOST PORT SIZE SECS MODE: a model of a send path in which the sending thread writes each frame whole
// (the 48-byte header compare's frames carry, then the payload) into a log of shared memory (a tmpfs file, as rds4j's
// rings are) and sends the written range itself once 32 KiB are written. It connects to compare's nio-sink, which
// parses, sequence-checks and counts the frames (-Dbatch.kib: the range sent at a time, default 32). MODE:
//   plain    nothing else per message; ranges sent with sendfile (FileChannel.transferTo)
//   atomics  plain, plus a getAndAdd per message (a socket's send-buffer count) and a volatile store (a commit that
//            another thread reads)
//   copy     atomics, but each range sent with a copying write from the mapped log instead of sendfile
//   twopass  atomics, plus a second pass before each send that stamps each frame's header and copies the frame into
//            a stage with a file of its own, which is what is sent (today's path: stamped in the socket's ring,
//            copied into the TCP send ring)
//   objects  twopass, plus a descriptor per frame through a queue, a sent list and a release (today's Message and
//            SendQueue)
// No acks: the log (-Dlog.mib, default 64 MiB) is written over a lap later, which with sendfile is safe only if TCP
// has sent those pages by then (64 MiB: 25 ms at 2.5 GB/s); a copying write hands the kernel a copy, so any size is.
public class LogModel {
    static final int HEADER = 48, BATCH = Integer.getInteger("batch.kib", 32) << 10;
    static final int LOG = Integer.getInteger("log.mib", 64) << 20;
    static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    public static void main(String[] a) throws Exception {
        final String host = a[0]; final int port = Integer.parseInt(a[1]), size = Integer.parseInt(a[2]);
        final long secs = Long.parseLong(a[3]); final boolean atomics = !a[4].equals("plain");
        final boolean objects = a[4].equals("objects");
        final boolean twoPass = objects || a[4].equals("twopass");
        // copy: one pass, as atomics, but each range sent with a copying write(2) from the mapped log, not sendfile
        final boolean copy = a[4].equals("copy");
        // objects: a descriptor per frame (as rds4j's Message per ring slot), taken into a queue at send, polled by
        // the second pass, into a sent list, and released from it as an ack would free it
        final Desc[] slots = new Desc[LOG / (HEADER + Integer.parseInt(a[2])) + 1];
        for (int i = 0; i < slots.length; i++) slots[i] = new Desc();
        final java.util.ArrayDeque<Desc> queue = new java.util.ArrayDeque<>(1 << 16), unacked = new java.util.ArrayDeque<>(1 << 16);
        final FileChannel log = tmpfsFile(".log");
        final MappedByteBuffer m = map(log);
        SocketChannel ch = null;
        for (int i = 0; i < 200 && ch == null; i++) {
            try { ch = SocketChannel.open(new InetSocketAddress(host, port)); } catch (Exception e) { Thread.sleep(50); }
        }
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        final ByteBuffer payload = ByteBuffer.allocateDirect(size);
        // twopass: the stage a second pass copies each frame into, stamping its header there (as the present path
        // stamps in the socket's ring and copies into the TCP send ring's stage), sent from its own tmpfs file
        final FileChannel stageLog = tmpfsFile(".stage");
        final MappedByteBuffer stage = map(stageLog);
        final AtomicLong queued = new AtomicLong();
        final int frame = HEADER + size;
        long seq = 0, tail = 0, sent = 0;
        final long end = System.nanoTime() + secs * 1_000_000_000L;
        int check = 0;
        while (true) {
            final int at = (int) (tail % LOG);
            payload.putLong(0, seq);
            m.putLong(at, seq);
            m.putLong(at + 8, 0L);
            m.putInt(at + 16, size);
            m.putShort(at + 20, (short) 5000);
            m.putShort(at + 22, (short) port);
            m.putLong(at + 24, 0L); m.putLong(at + 32, 0L); m.putLong(at + 40, 0L);
            m.put(at + HEADER, payload, 0, size);
            if (atomics) {
                queued.getAndAdd(size);
                INT.setVolatile(m, at + 44, 1);
            }
            if (objects) {
                final Desc d = slots[(int) (seq % slots.length)];
                d.sequence = seq; d.position = tail; d.length = size; d.stamped = false;
                queue.add(d);
            }
            seq++;
            tail += frame;
            // the next frame would straddle the log's end: what is written goes now, and the log starts again at 0
            final boolean wrap = (int) (tail % LOG) + frame > LOG;
            if (tail - sent >= BATCH || wrap) {
                if (twoPass) {
                    // the second pass: each frame's header stamped (sequence, ack) and the frame copied to the stage
                    if (objects) {
                        Desc d;
                        while ((d = queue.poll()) != null) {
                            final int from = (int) (d.position % LOG);
                            m.putLong(from + 8, d.sequence);
                            stage.put(from, m, from, HEADER + d.length);
                            d.stamped = true;
                            unacked.add(d);
                        }
                        while (unacked.size() > 4096) { // a cumulative ack frees the oldest
                            final Desc f = unacked.poll();
                            f.position = -1;
                        }
                    } else {
                        for (long p = sent; p < tail; p += frame) {
                            final int from = (int) (p % LOG);
                            m.putLong(from + 8, seq);
                            stage.put(from, m, from, frame);
                        }
                    }
                    sent += send(stageLog, ch, sent, tail - sent);
                } else if (copy) {
                    sent += write(m, ch, sent, tail - sent);
                } else {
                    sent += send(log, ch, sent, tail - sent);
                }
                if (wrap) {
                    tail += LOG - (int) (tail % LOG);
                    sent = tail;
                }
                if (atomics) queued.set(0);
                if ((++check & 63) == 0 && System.nanoTime() > end) break;
            }
        }
        ch.close();
    }
    /** A file of LOG bytes on tmpfs, deleted at once (its channel keeps it), as rds4j's rings are made. */
    static FileChannel tmpfsFile(String suffix) throws Exception {
        final Path file = Files.createTempFile(Path.of("/dev/shm"), "logmodel", suffix);
        final RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw");
        raf.setLength(LOG);
        Files.delete(file);
        return raf.getChannel();
    }
    /** The file mapped, every page touched once, as a ring in use is. */
    static MappedByteBuffer map(FileChannel file) throws Exception {
        final MappedByteBuffer m = file.map(FileChannel.MapMode.READ_WRITE, 0, LOG);
        m.order(ByteOrder.BIG_ENDIAN);
        for (int i = 0; i < LOG; i += 4096) m.put(i, (byte) 0);
        return m;
    }
    static final class Desc { long sequence, position; int length; boolean stamped; }
    static long write(MappedByteBuffer m, SocketChannel ch, long from, long n) throws Exception {
        final int at = (int) (from % LOG);
        final ByteBuffer range = m.slice(at, (int) n); // a batch never straddles the end (see the wrap)
        while (range.hasRemaining()) ch.write(range);
        return n;
    }
    static long send(FileChannel log, SocketChannel ch, long from, long n) throws Exception {
        long done = 0;
        while (done < n) {
            final long at = (from + done) % LOG;
            done += log.transferTo(at, Math.min(n - done, LOG - at), ch);
        }
        return n;
    }
}
