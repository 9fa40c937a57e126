package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine;
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

    private static StackOptions stackOptions(final String... args)
    {
        final ParseResult parsed = new CommandLine(new RdsCli()).parseArgs(args);
        return (StackOptions)parsed.subcommand().commandSpec().mixins().get("stackOptions").userObject();
    }
}
