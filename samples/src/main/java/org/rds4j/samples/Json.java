package org.rds4j.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.jr.ob.JSON;

/**
 * The one JSON configuration of rds4j's tools ({@code rds ... --json}, the comparison suite's result lines, the
 * fault-test nodes' summaries), on jackson-jr: objects are {@link Map}s in their order, arrays {@link java.util.List}s,
 * {@code null} values are written (a field that is {@code null} says so), and {@link java.math.BigDecimal}s in plain
 * notation, never with an exponent. Read back, integers are {@link Integer} or {@link Long} and other numbers
 * {@link Double}: read them through {@link Number}.
 */
public final class Json
{
    private static final JsonFactory FACTORY = JsonFactory.builder().enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN).build();
    private static final JSON JSON = com.fasterxml.jackson.jr.ob.JSON.builder(FACTORY)
        .build()
        .with(com.fasterxml.jackson.jr.ob.JSON.Feature.WRITE_NULL_PROPERTIES,
            com.fasterxml.jackson.jr.ob.JSON.Feature.PRESERVE_FIELD_ORDERING)
        .without(com.fasterxml.jackson.jr.ob.JSON.Feature.PRETTY_PRINT_OUTPUT);

    private Json()
    {
    }

    /**
     * @param value maps, lists, strings, numbers, booleans and {@code null}, nested.
     * @return it as JSON on one line.
     */
    public static String write(final Object value)
    {
        try
        {
            return JSON.asString(value);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param text one JSON object.
     * @return its fields, in their order.
     * @throws IllegalArgumentException if the text is not one valid JSON object and nothing else, so that a caller
     *                                  that reads a line also checks that the line is valid JSON.
     */
    public static Map<String, Object> object(final String text)
    {
        try (JsonParser parser = FACTORY.createParser(text))
        {
            final Map<String, Object> object = JSON.mapFrom(parser);
            if (parser.nextToken() != null)
            {
                throw new IllegalArgumentException("not one JSON object: text after it at " + parser.currentLocation());
            }
            return object;
        }
        catch (final IOException e)
        {
            throw new IllegalArgumentException("not a JSON object: " + e.getMessage(), e);
        }
    }
}
