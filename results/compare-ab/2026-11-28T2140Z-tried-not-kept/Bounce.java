import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
// Bounce FILE N ME LAPS [PATTERN]: N processes pass a token 0 -> 1 -> .. -> N-1 -> .. -> 1 -> 0 (a round trip through N-2 relays),
// each yielding while it waits for its turn; process 0 prints microseconds per round trip. PATTERN (optional): one
// digit per process, 1 for one that also makes a non-blocking read that finds nothing in each wait cycle, as a
// driver's agent reads its TCP connection (e.g. 0110: the two relays).
public class Bounce {
    static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[1]), me = Integer.parseInt(a[2]); long laps = Long.parseLong(a[3]);
        int steps = 2 * (n - 1);
        MappedByteBuffer m;
        try (FileChannel ch = FileChannel.open(Path.of(a[0]), StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE)) {
            m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096);
        }
        long s = 0;
        final boolean reads = a.length > 4 && a[4].charAt(me) == '1';
        final DatagramChannel nothing = DatagramChannel.open();
        nothing.bind(new InetSocketAddress("127.0.0.1", 0));
        nothing.configureBlocking(false);
        final ByteBuffer into = ByteBuffer.allocateDirect(2048);
        for (long lap = 0; lap < laps; lap++) {
            if (lap == laps / 10) s = System.nanoTime();
            for (int k = 0; k < steps; k++) {
                int who = k < n ? k : steps - k;
                if (who != me) continue;
                long want = lap * steps + k;
                while ((long)LONG.getVolatile(m, 64) != want) {
                    if (reads) nothing.receive(into);
                    Thread.yield();
                }
                LONG.setRelease(m, 64, want + 1);
            }
        }
        if (me == 0) System.out.printf("processes %d, %d hand-offs per round trip: %.2f us per round trip%n", n, steps, (System.nanoTime() - s) / 1000.0 / (laps - laps / 10));
    }
}
