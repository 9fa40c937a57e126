package org.rds4j.transport.ib;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.CoreStack;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Transport selection on a machine where 127.0.0.1 belongs to no RDMA device (any host, and the rxe guest). */
class IbSelectionTest
{
    @Test
    void theIbTransportIsRegisteredAndServesNoLoopbackAddress() throws Exception
    {
        try (CoreStack stack = CoreStack.open(RdsStackConfig.builder().name("ib-sel-1").infoFile(false).build()))
        {
            final IbTransport ib = (IbTransport)stack.transport("ib");
            assertNotNull(ib, "registered through META-INF/services");
            assertFalse(ib.canServe(InetAddress.getByName("127.0.0.1")));
            assertTrue(ib.checksumsHeaders());
        }
    }

    @Test
    void forcingIbWhereThereIsNoneFailsAtBindWithTheReason() throws Exception
    {
        try (RdsStack stack = RdsStack.open(RdsStackConfig.builder().name("ib-sel-2").infoFile(false).build());
             RdsSocket socket = stack.openSocket())
        {
            socket.setOption(RdsOptions.RDS_TRANSPORT, TransportType.IB);
            final RdsException ex = assertThrows(RdsException.class,
                () -> socket.bind(new InetSocketAddress("127.0.0.1", 4000)));
            assertEquals(RdsResult.EADDRNOTAVAIL, ex.code());
            // on a host without RDMA: "no RDMA device on this machine"; in the rxe guest: "... has the address"
            assertTrue(ex.getMessage().contains("no RDMA device") ||
                ex.getMessage().contains("cannot be loaded") || ex.getMessage().contains("ABI"), ex.getMessage());
        }
    }

    @Test
    void autoFallsBackToTcpForAnAddressWithoutRdma() throws Exception
    {
        try (RdsStack stack = RdsStack.open(RdsStackConfig.builder().name("ib-sel-3").infoFile(false).build());
             RdsSocket a = stack.openSocket().bind(new InetSocketAddress("127.0.0.1", 0));
             RdsSocket b = stack.openSocket().bind(new InetSocketAddress("127.0.0.1", 0)))
        {
            // AUTO picked a transport that can serve 127.0.0.1 (TCP), so bind and send work
            assertEquals(1, a.send(ByteBuffer.wrap(new byte[] {1}), b.localAddress()));
        }
    }
}
