package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The tools' one JSON configuration: exact bytes written, strict reading. */
class JsonTest
{
    @Test
    void writesInOrderWithNullsAndPlainDecimalsOnOneLine()
    {
        final Map<String, Object> object = new LinkedHashMap<>();
        object.put("z", 1L);
        object.put("a", null);
        object.put("big", new BigDecimal("1E+12"));
        object.put("small", new BigDecimal("0.125"));
        object.put("text", "tab\there \"q\" \u0001");
        object.put("list", List.of(1, "two"));
        assertEquals("{\"z\":1,\"a\":null,\"big\":1000000000000,\"small\":0.125,\"text\":\"tab\\there \\\"q\\\" \\u0001\","
            + "\"list\":[1,\"two\"]}", Json.write(object));
    }

    @Test
    void readsOneObjectAndNothingElse()
    {
        final Map<String, Object> object = Json.object(" {\"b\":2,\"a\":null,\"x\":1.5,\"big\":5000000000} ");
        assertEquals(List.of("b", "a", "x", "big"), List.copyOf(object.keySet()));
        assertTrue(object.containsKey("a"));
        assertEquals(2, object.get("b"));
        assertEquals(1.5, object.get("x"));
        assertEquals(5_000_000_000L, object.get("big"));
        for (final String bad : new String[] {"{\"a\":1} x", "{\"a\":1}{}", "[1]", "{\"a\":", ""})
        {
            assertThrows(IllegalArgumentException.class, () -> Json.object(bad), bad);
        }
    }
}
