package org.rds4j.core.wire;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CongestionMapTest
{
    private final CongestionMap map = new CongestionMap();
    private final UnsafeBuffer out = new UnsafeBuffer(ByteBuffer.allocateDirect(CongestionMap.BYTES));

    @Test
    void portIsBitPortMod8OfBytePortDiv8()
    {
        assertTrue(map.set(4000));
        map.set(0);
        map.set(65535);
        map.copyTo(out, 0);
        assertEquals(1 << (4000 % 8), out.getByte(4000 / 8) & 0xFF);
        assertEquals(0x01, out.getByte(0) & 0xFF);
        assertEquals(0x80, out.getByte(8191) & 0xFF);
        int nonZero = 0;
        for (int i = 0; i < CongestionMap.BYTES; i++)
        {
            nonZero += out.getByte(i) != 0 ? 1 : 0;
        }
        assertEquals(3, nonZero);
    }

    @Test
    void setAndClearReportChangesAndBumpTheVersion()
    {
        final long v0 = map.version();
        assertTrue(map.set(7));
        assertFalse(map.set(7), "setting a set bit is no change");
        assertTrue(map.isCongested(7));
        assertFalse(map.isCongested(6));
        final long v1 = map.version();
        assertNotEquals(v0, v1);
        assertTrue(map.clear(7));
        assertFalse(map.clear(7));
        assertFalse(map.isCongested(7));
        assertNotEquals(v1, map.version());
    }

    @Test
    void replaceReportsExactlyThePortsThatWereFreed()
    {
        map.set(1);
        map.set(100);
        map.set(40000);
        final UnsafeBuffer update = new UnsafeBuffer(ByteBuffer.allocateDirect(CongestionMap.BYTES + 16));
        // the update keeps 100, frees 1 and 40000, newly congests 65535; it sits at offset 16
        update.putByte(16 + 100 / 8, (byte)(1 << (100 % 8)));
        update.putByte(16 + 65535 / 8, (byte)0x80);
        final List<Integer> freed = new ArrayList<>();
        assertTrue(map.replace(update, 16, freed::add));
        assertEquals(List.of(1, 40000), freed);
        assertTrue(map.isCongested(100));
        assertTrue(map.isCongested(65535));
        assertFalse(map.isCongested(1));
        final long version = map.version();
        assertFalse(map.replace(update, 16, freed::add), "the same map again changes nothing");
        assertEquals(version, map.version());
    }
}
