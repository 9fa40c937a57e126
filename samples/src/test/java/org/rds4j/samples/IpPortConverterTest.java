package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import picocli.CommandLine;
import picocli.CommandLine.TypeConversionException;

class IpPortConverterTest
{
    private final IpPortConverter converter = new IpPortConverter();

    @ParameterizedTest
    @ValueSource(strings = {
        "nonsense", "1.2.3.4", "1.2.3.4:99999", "", " ", "1.2.3.4:", ":4000", "1.2.3:4000", "1.2.3.4.5:4000",
        "256.0.0.1:4000", "1.2.3.4:-1", "1.2.3.4:40a0", "localhost:4000", "::1:4000", "[nonsense]:4000", "[]:4000"})
    void rejects(final String text)
    {
        final TypeConversionException e = assertThrows(TypeConversionException.class, () -> converter.convert(text));
        assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
    }

    @Test
    void accepts() throws Exception
    {
        assertEquals(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 4000), converter.convert("127.0.0.1:4000"));
        assertEquals(new InetSocketAddress(InetAddress.getByName("::1"), 4000), converter.convert("[::1]:4000"));
        assertEquals(new InetSocketAddress(InetAddress.getByName("10.0.0.7"), 0), converter.convert("10.0.0.7:0"));
        assertEquals(65535, converter.convert("1.2.3.4:65535").getPort());
    }

    @Test
    void formatsWithoutHostName() throws Exception
    {
        assertEquals("127.0.0.1:4000", IpPortConverter.format(converter.convert("127.0.0.1:4000")));
        assertEquals("[0:0:0:0:0:0:0:1]:4000", IpPortConverter.format(converter.convert("[::1]:4000")));
    }

    @Test
    void badBindIsAClearUsageError()
    {
        final StringWriter err = new StringWriter();
        final CommandLine cli = new CommandLine(new RdsCli());
        cli.setErr(new PrintWriter(err, true));
        cli.setOut(new PrintWriter(new StringWriter(), true));
        assertEquals(CommandLine.ExitCode.USAGE, cli.execute("echo", "--bind", "1.2.3.4:99999"));
        assertTrue(err.toString().contains("--bind"), err.toString());
        assertTrue(err.toString().contains("out of range 0..65535"), err.toString());
    }
}
