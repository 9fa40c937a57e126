import java.nio.*;
import org.agrona.concurrent.UnsafeBuffer;
public class Cp {
    static final int N = 112, SLOTS = 4096;
    public static void main(String[] a) {
        ByteBuffer src = ByteBuffer.allocateDirect(128 * SLOTS);
        ByteBuffer[] frames = new ByteBuffer[SLOTS];
        for (int i = 0; i < SLOTS; i++) frames[i] = src.slice(i * 128, 128 * (SLOTS - i));
        ByteBuffer heap = ByteBuffer.allocate(128);
        ByteBuffer stage = ByteBuffer.allocateDirect(1 << 15);
        UnsafeBuffer ustage = new UnsafeBuffer(stage);
        UnsafeBuffer usrc = new UnsafeBuffer(src);
        for (int round = 0; round < 6; round++) {
            for (int mode = 0; mode < 3; mode++) {
                long t0 = System.nanoTime(); long ops = 0;
                for (int it = 0; it < 20000; it++) {
                    int pos = 0;
                    for (int i = 0; i < 256; i++) {
                        ByteBuffer f = (mode == 2 && (i & 63) == 0) ? heap : frames[(it * 256 + i) & (SLOTS - 1)];
                        f.limit(N).position(0);
                        if (mode == 0 || mode == 2) {
                            stage.put(pos, f, 0, N);
                        } else {
                            ustage.putBytes(pos, usrc, ((it * 256 + i) & (SLOTS - 1)) * 128, N);
                        }
                        pos += N; ops++;
                    }
                }
                long t = System.nanoTime() - t0;
                System.out.printf("mode %d %.2f ns/copy%n", mode, (double) t / ops);
            }
        }
    }
}
