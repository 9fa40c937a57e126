package org.rds4j.transport.ib.verbs;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The build-time layout check: compiles src/test/c/verbs_layout_probe.c against the installed verbs,
 * rdma_cm and libffi headers, runs it, and requires every offset, size and constant it prints to equal
 * {@link VerbsLayout}'s, name for name.
 */
class VerbsLayoutProbeTest
{
    @Test
    void javaLayoutMatchesTheCHeaders() throws Exception
    {
        assumeFalse(NativeTestSupport.skipped(), "rds4j.ib.skipNativeTests is set");
        final Path probe = NativeTestSupport.gcc("verbs_layout_probe",
            NativeTestSupport.SOURCES.resolve("verbs_layout_probe.c").toString());
        final Map<String, Long> fromC = new TreeMap<>();
        for (final String line : NativeTestSupport.run(probe).split("\n"))
        {
            if (!line.isBlank())
            {
                final String[] parts = line.trim().split(" ");
                fromC.put(parts[0], Long.parseLong(parts[1]));
            }
        }
        final Map<String, Long> fromJava = VerbsLayout.values();
        final StringBuilder mismatches = new StringBuilder();
        for (final Map.Entry<String, Long> c : fromC.entrySet())
        {
            final Long java = fromJava.get(c.getKey());
            if (java == null)
            {
                mismatches.append("\n  ").append(c.getKey()).append(": C ").append(c.getValue()).append(", missing in VerbsLayout");
            }
            else if (!java.equals(c.getValue()))
            {
                mismatches.append("\n  ").append(c.getKey()).append(": C ").append(c.getValue()).append(", VerbsLayout ").append(java);
            }
        }
        for (final String name : fromJava.keySet())
        {
            if (!fromC.containsKey(name))
            {
                mismatches.append("\n  ").append(name).append(": in VerbsLayout, not printed by the probe");
            }
        }
        if (mismatches.length() > 0)
        {
            fail("VerbsLayout disagrees with the installed headers:" + mismatches);
        }
        assertEquals(fromC.size(), fromJava.size());
    }
}
