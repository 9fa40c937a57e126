package org.rds4j.core;

/**
 * The sender's rule for asking the peer to ack, as the kernel's {@code rds_send_xmit}: a message carries
 * ACK_REQUIRED when the budget of 8 packets or 16 MiB sent since the last request runs out; the budget then
 * starts again. (Retransmissions and messages queued past half a socket's send buffer ask too; the caller
 * handles those.)
 */
final class AckRequestBudget
{
    static final int MAX_UNACKED_PACKETS = 8;
    static final long MAX_UNACKED_BYTES = 16L << 20;

    private int packets = MAX_UNACKED_PACKETS;
    private long bytes = MAX_UNACKED_BYTES;

    /**
     * Charges one message against the budget.
     *
     * @param length its payload bytes.
     * @return true if it must carry ACK_REQUIRED.
     */
    boolean charge(final int length)
    {
        if (packets == 0 || bytes < length)
        {
            packets = MAX_UNACKED_PACKETS;
            bytes = MAX_UNACKED_BYTES;
            return true;
        }
        packets--;
        bytes -= length;
        return false;
    }
}
