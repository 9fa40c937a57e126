package org.rds4j.samples.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.rds4j.samples.Json;

class JsonLineTest
{
    @Test
    void writesValidJsonWithNumbersAsNumbers()
    {
        final String line = new JsonLine()
            .add("sent", 12345L)
            .add("rate", 1234.5678)
            .add("whole", 3.0)
            .add("nan", Double.NaN)
            .add("ok", true)
            .add("text", "a \"quoted\" \\ line\n\u0001")
            .add("none", (String)null)
            .add("rtt_us", new JsonLine().add("p50", 45.25).add("max", 1000))
            .add("nothing", (JsonLine)null)
            .add("list", List.of("a", "b"))
            .toString();
        final Map<String, Object> json = Json.object(line);
        assertEquals(12345, json.get("sent"), "integers read back as integers");
        assertEquals(1234.568, json.get("rate"));
        assertEquals(3, json.get("whole"), "a whole double is written without decimals");
        assertNull(json.get("nan"));
        assertEquals(Boolean.TRUE, json.get("ok"));
        assertEquals("a \"quoted\" \\ line\n\u0001", json.get("text"));
        assertEquals(45.25, ((Map<?, ?>)json.get("rtt_us")).get("p50"));
        assertEquals(List.of("a", "b"), json.get("list"));
        assertEquals(-1, line.indexOf('\n'), "one line");
    }

    @Test
    void numbersHaveNoExponentAndNoTrailingZeros()
    {
        assertEquals("0", JsonLine.number(0.0001));
        assertEquals("0.5", JsonLine.number(0.5));
        assertEquals("1000000000000", JsonLine.number(1e12));
        assertEquals("12.346", JsonLine.number(12.3456));
    }
}
