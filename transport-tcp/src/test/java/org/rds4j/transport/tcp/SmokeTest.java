package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SmokeTest
{
    @Test
    void twoStacksExchangeOneMessage() throws Exception
    {
        final RdsStackConfig config = RdsStackConfig.builder()
            .transportConfig(TcpConfig.builder().tcpPort(27001).build()).build();
        try (RdsStack a = RdsStack.open(config.toBuilder().name("a").build());
             RdsStack b = RdsStack.open(config.toBuilder().name("b").build());
             RdsSocket sa = a.openSocket();
             RdsSocket sb = b.openSocket())
        {
            sa.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 5000));
            sb.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 5000));
            sb.setOption(org.rds4j.RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            sa.setOption(org.rds4j.RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            assertEquals(5, sa.send(ByteBuffer.wrap("hello".getBytes(StandardCharsets.US_ASCII)), sb.localAddress()));
            final ByteBuffer dst = ByteBuffer.allocate(100);
            assertEquals(sa.localAddress(), sb.receive(dst));
            assertEquals("hello", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
            assertEquals(3, sb.send(ByteBuffer.wrap("bye".getBytes(StandardCharsets.US_ASCII)), sa.localAddress()));
            dst.clear();
            assertEquals(sb.localAddress(), sa.receive(dst));
            assertEquals(3, dst.position());
        }
    }
}
