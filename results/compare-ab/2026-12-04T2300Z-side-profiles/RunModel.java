package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * The model of docs/receive-runs.md's first step: a 256 KiB read batch of frames (64 B payloads, or -Dpayload=N)
 * through a socket's receive ring as today (a record per message: ReceiveRing.write, then takeInto), and as runs (a
 * record per run of up to an eighth of the ring, the frames copied whole, read frame by frame from their headers).
 * One thread, in cache; the ring's steps only (not the receive lock, counts or accounting). Compiled in the package
 * org.rds4j.core against rds-core's classes, agrona, jctools and slf4j-api.
 */
public class RunModel
{
    static final int PAYLOAD = Integer.getInteger("payload", 64);
    static final int FRAME = RdsHeader.LENGTH + PAYLOAD;
    static final int BATCH = 256 * 1024 / FRAME;
    static final int RING = 256 * 1024;

    public static void main(final String[] args) throws Exception
    {
        final UnsafeBuffer frames = new UnsafeBuffer(ByteBuffer.allocateDirect(BATCH * FRAME));
        for (int i = 0; i < BATCH; i++)
        {
            RdsHeader.write(frames, i * FRAME, i + 1, 0, PAYLOAD, 4000, 4001, 0, 0);
            frames.setMemory(i * FRAME + RdsHeader.LENGTH, PAYLOAD, (byte)i);
        }
        final InetSocketAddress sender = new InetSocketAddress("10.1.2.3", 4000);
        final ReceiveRing ring = new ReceiveRing(Path.of("/dev/shm"), RING);
        // the run ring: records of [length][mark][16 B][frames...]
        final ByteBuffer runMemory = SharedMemory.map(Path.of("/dev/shm"), "runs", RING + RecordRing.POSITIONS_LENGTH);
        final UnsafeBuffer runBuffer = new UnsafeBuffer(runMemory);
        final RecordRing writer = new RecordRing(runBuffer, RING);
        final RecordRing reader = new RecordRing(runBuffer, RING);
        final ByteBuffer dst = ByteBuffer.allocateDirect(2048);
        final int maxRun = (RING / 8 - 24) / FRAME;
        long sink = 0;
        for (int round = 0; round < 40; round++)
        {
            final int reps = 400;
            long t0 = System.nanoTime();
            for (int r = 0; r < reps; r++)
            {
                for (int i = 0; i < BATCH; )
                {
                    // deliver up to what fits (the ring holds a batch's records), then take them all
                    int n = 0;
                    while (i < BATCH && ring.write(sender, frames, i * FRAME + RdsHeader.LENGTH, PAYLOAD))
                    {
                        i++; n++;
                    }
                    InetSocketAddress from;
                    while ((from = ring.takeInto(dst.clear())) != null)
                    {
                        sink += dst.position() + from.getPort();
                    }
                }
            }
            long t1 = System.nanoTime();
            for (int r = 0; r < reps; r++)
            {
                for (int i = 0; i < BATCH; )
                {
                    // runs of up to maxRun frames, each one record with one bulk copy
                    while (i < BATCH)
                    {
                        final int n = Math.min(maxRun, BATCH - i);
                        final int at = writer.claim(24 + n * FRAME);
                        if (at < 0)
                        {
                            break;
                        }
                        runBuffer.putInt(at + 4, -1);
                        runBuffer.putLong(at + 8, 0);
                        runBuffer.putLong(at + 16, 0x0302010affff0000L);
                        runBuffer.putBytes(at + 24, frames, i * FRAME, n * FRAME);
                        writer.commit();
                        i += n;
                    }
                    int at;
                    while ((at = reader.next()) >= 0)
                    {
                        final int end = at + reader.length();
                        for (int c = at + 24; c < end; )
                        {
                            final int len = runBuffer.getInt(c + RdsHeader.LEN_OFFSET, ByteOrder.BIG_ENDIAN);
                            final int sport = runBuffer.getShort(c + RdsHeader.SPORT_OFFSET, ByteOrder.BIG_ENDIAN) & 0xFFFF;
                            runBuffer.getBytes(c + RdsHeader.LENGTH, dst.clear(), Math.min(len, dst.remaining()));
                            sink += dst.position() + (sport == sender.getPort() ? sender : null).getPort();
                            c += RdsHeader.LENGTH + len;
                        }
                        reader.take(at);
                        reader.publishHead();
                    }
                }
            }
            long t2 = System.nanoTime();
            final double per = (double)reps * BATCH;
            if (round % 5 == 4)
            {
                System.out.printf("round %d: per record %.1f ns/msg, per run %.1f ns/msg%n", round, (t1 - t0) / per, (t2 - t1) / per);
            }
        }
        System.out.println(sink);
    }
}
