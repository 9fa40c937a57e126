import java.net.*; import java.nio.*; import java.nio.channels.*; import java.util.*; import java.util.concurrent.atomic.*; import java.util.concurrent.locks.LockSupport;
public class NioRateShape {
  public static void main(String[] a) throws Exception {
    int port = Integer.parseInt(a[1]);
    if (a[0].equals("server")) {
      ServerSocketChannel ss = ServerSocketChannel.open(); ss.bind(new InetSocketAddress("127.0.21.2", port));
      SocketChannel c = ss.accept(); c.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ByteBuffer b = ByteBuffer.allocateDirect(64);
      while (true) { b.clear(); while (b.hasRemaining()) if (c.read(b) < 0) return; b.flip(); while (b.hasRemaining()) c.write(b); }
    }
    int rate = Integer.parseInt(a[2]); int dur = Integer.parseInt(a[3]);
    SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.21.2", port)); c.setOption(StandardSocketOptions.TCP_NODELAY, true);
    long interval = 1_000_000_000L / rate; int n = rate * dur; long[] rtt = new long[n]; long[] sched = new long[n];
    AtomicLong replies = new AtomicLong(); Thread sender = Thread.currentThread(); AtomicBoolean parked = new AtomicBoolean();
    Thread rx = new Thread(() -> { ByteBuffer b = ByteBuffer.allocateDirect(64); try { for (int i = 0; i < n; i++) { b.clear(); while (b.hasRemaining()) c.read(b); b.flip(); long s = b.getLong(0); rtt[i] = System.nanoTime() - s; replies.set(i + 1); if (parked.get()) LockSupport.unpark(sender); } } catch (Exception e) { e.printStackTrace(); } });
    rx.start(); ByteBuffer b = ByteBuffer.allocateDirect(64); long start = System.nanoTime() + 100_000_000L;
    for (int i = 0; i < n; i++) {
      long when = start + i * interval; long left;
      while ((left = when - System.nanoTime()) > 0) { if (left > 120_000) LockSupport.parkNanos(left - 60_000); else Thread.onSpinWait(); }
      int spins = 0; while (i - replies.get() >= 1) { if (spins++ < 64) { Thread.onSpinWait(); continue; } parked.set(true); if (i - replies.get() >= 1) LockSupport.parkNanos(1_000_000); parked.set(false); }
      sched[i] = when; b.clear(); b.putLong(0, when); while (b.hasRemaining()) c.write(b);
    }
    rx.join();
    int w = rate / 5; int windows = 0, over = 0; List<Long> maxes = new ArrayList<>(); long[] steady = Arrays.copyOfRange(rtt, 2 * rate, n);
    for (int k = 2 * rate; k + w <= n; k += w) { long m = 0; for (int j = k; j < k + w; j++) m = Math.max(m, rtt[j]); maxes.add(m); windows++; if (m > 1_000_000) over++; }
    Collections.sort(maxes); Arrays.sort(steady);
    System.out.printf("NIO windows %d, max>1ms in %d, median window max %.0f us, worst %.0f | p50 %.1f p90 %.1f p99 %.1f max %.0f%n", windows, over, maxes.get(maxes.size()/2)/1e3, maxes.get(maxes.size()-1)/1e3, steady[steady.length/2]/1e3, steady[(int)(steady.length*0.9)]/1e3, steady[(int)(steady.length*0.99)]/1e3, steady[steady.length-1]/1e3);
    System.exit(0);
  }
}
