package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

/** Test frames lying back to back in one buffer, as a TCP read holds them. */
final class BackToBackFrames
{
    private BackToBackFrames()
    {
    }

    /**
     * @param payloads the frames' payloads, in order.
     * @return the frames: each an RDS header (from port 4000 to 5000, sequences from 1), then its payload.
     */
    static UnsafeBuffer of(final byte[]... payloads)
    {
        int total = 0;
        for (final byte[] payload : payloads)
        {
            total += RdsHeader.LENGTH + payload.length;
        }
        final UnsafeBuffer frames = new UnsafeBuffer(new byte[total]);
        int at = 0;
        for (int i = 0; i < payloads.length; i++)
        {
            RdsHeader.write(frames, at, i + 1, 0, payloads[i].length, 4000, 5000, 0, 0);
            frames.putBytes(at + RdsHeader.LENGTH, payloads[i]);
            at += RdsHeader.LENGTH + payloads[i].length;
        }
        return frames;
    }
}
