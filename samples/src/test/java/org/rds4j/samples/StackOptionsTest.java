package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

class StackOptionsTest
{
    @Test
    void defaults()
    {
        final RdsStackConfig config = stackOptions("echo", "--bind", "127.0.0.1:4000").config("n");
        assertEquals(TcpConfig.DEFAULT_TCP_PORT, TcpConfig.of(config).tcpPort());
        assertEquals(TransportType.AUTO, config.transport());
        assertEquals("n", config.name());
    }

    @Test
    void optionsReachTheConfig()
    {
        final RdsStackConfig config = stackOptions("demo", "--tcp-port", "26999", "--transport", "TCP").config("node1");
        assertEquals(26999, TcpConfig.of(config).tcpPort());
        assertEquals(TransportType.TCP, config.transport());
        assertEquals(TransportType.IB, stackOptions("demo", "--transport", "ib").transport());
    }

    @Test
    void optionsNotGivenLeaveTheSettingsToTheirProperties()
    {
        System.setProperty("rds4j.tcp.port", "26998");
        System.setProperty("rds4j.transport", "tcp");
        try
        {
            final RdsStackConfig config = stackOptions("demo").config("node1");
            assertEquals(26998, TcpConfig.of(config).tcpPort());
            assertEquals(TransportType.TCP, config.transport());
            final RdsStackConfig given = stackOptions("demo", "--tcp-port", "26997", "--transport", "auto").config("node1");
            assertEquals(26997, TcpConfig.of(given).tcpPort());
            assertEquals(TransportType.AUTO, given.transport());
        }
        finally
        {
            System.clearProperty("rds4j.tcp.port");
            System.clearProperty("rds4j.transport");
        }
    }

    @Test
    void aPortOutOfRangeIsAUsageError()
    {
        final StackOptions options = stackOptions("demo", "--tcp-port", "0");
        assertEquals("Invalid value for option '--tcp-port': 0 is not in 1..65535",
            assertThrows(ParameterException.class, () -> options.config("node1")).getMessage());
    }

    private static StackOptions stackOptions(final String... args)
    {
        final ParseResult parsed = new CommandLine(new RdsCli()).parseArgs(args);
        return (StackOptions)parsed.subcommand().commandSpec().mixins().get("stackOptions").userObject();
    }
}
