package org.rds4j.transport.ib;

/**
 * Credit flow control of one IB connection, by the kernel's rules ({@code rds_ib_send_grab_credits}): a
 * fragment may only be posted with a send credit, one per receive buffer the peer advertised; this side's
 * newly posted receive buffers are advertised to the peer in the {@code credit} byte of the headers it sends.
 * <p>
 * Flow control of this side's sends is on only if the peer's connection private data gave a non-zero credit,
 * as the kernel decides it ({@code rds_ib_set_flow_control}: {@code i_flowctl} needs the peer's credit). A kernel
 * peer always gives 0: its flow control is off by default ({@code net.rds.ib.flow_control}), and even with it on
 * it posts its receive buffers only once the connection is established, after its private data went. With flow
 * control off every fragment may be posted at once (a full receive ring on the peer makes the QP retry: RNR retry
 * 7 is "forever"). This side still advertises its receive buffers, because a kernel with flow control on turns it
 * on for its own sends when rds4j's private data gave credits, and then sends only on what rds4j advertises.
 * <p>
 * One rule keeps both sides from waiting on each other forever: while this side has nothing to advertise,
 * its last send credit is held back, so the last credit it spends always carries a credit update. A
 * connection with 16 or more receive buffers waiting to be advertised asks for an ack-only frame to carry
 * them ({@link #advertiseSoon()}).
 * <p>
 * Agent thread only; allocation free.
 */
final class IbCredits
{
    /** Most credits one header can advertise: the field is a byte. */
    static final int MAX_ADVERTISED = 255;
    /** Posted-but-unadvertised receives at which an update is sent without waiting for data. */
    static final int ADVERTISE_SOON = 16;
    /** Send credits are kept in 16 bits, as the kernel does; more are not counted. */
    static final int MAX_SEND_CREDITS = 0xFFFF;

    private final int advertiseThreshold;
    private boolean flowControl = true;
    private int sendCredits;
    private int unadvertised;

    IbCredits()
    {
        this(ADVERTISE_SOON);
    }

    /**
     * @param advertiseThreshold unadvertised receives at which {@link #advertiseSoon()} turns true: 16, or less
     *                           for a receive ring so small that a peer's held-back credit would otherwise
     *                           wait for receives that can never come (a ring of 16 with 15 posted to).
     */
    IbCredits(final int advertiseThreshold)
    {
        this.advertiseThreshold = Math.max(1, Math.min(ADVERTISE_SOON, advertiseThreshold));
    }

    /**
     * Starts a new connection: no receive buffer of this side is waiting to be advertised (those posted before
     * connecting were told in the private data).
     *
     * @param initialSendCredits the receive buffers the peer posted, from its connection private data; 0 turns
     *                           flow control of this side's sends off for the connection, as the kernel does.
     */
    void reset(final int initialSendCredits)
    {
        flowControl = initialSendCredits > 0;
        sendCredits = Math.min(MAX_SEND_CREDITS, Math.max(0, initialSendCredits));
        unadvertised = 0;
    }

    /** @return true if sends need credits on this connection (the peer's private data gave some). */
    boolean flowControl()
    {
        return flowControl;
    }

    /** A received header advertised {@code credits} receive buffers of the peer. */
    void onCreditsReceived(final int credits)
    {
        sendCredits = Math.min(MAX_SEND_CREDITS, sendCredits + credits);
    }

    /** This side posted {@code count} more receive buffers, to be advertised. */
    void onReceivesPosted(final int count)
    {
        unadvertised += count;
    }

    /**
     * Takes send credits for fragments about to be posted.
     *
     * @param wanted fragments the caller would post.
     * @return how many it may post, 0..wanted; the caller posts that many and keeps the rest queued.
     */
    int grab(final int wanted)
    {
        if (!flowControl)
        {
            return wanted;
        }
        int available = sendCredits;
        if (available > 0 && unadvertised == 0)
        {
            available--; // the last credit is for a frame that carries a credit update
        }
        final int got = Math.min(wanted, available);
        sendCredits -= got;
        return got;
    }

    /**
     * @return the credits to write into the header being posted now (at most {@link #MAX_ADVERTISED}); they
     *         count as advertised from here on.
     */
    int takeAdvertisement()
    {
        final int advertised = Math.min(MAX_ADVERTISED, unadvertised);
        unadvertised -= advertised;
        return advertised;
    }

    /** @return true if enough receive buffers wait to be advertised that an ack-only frame should carry them. */
    boolean advertiseSoon()
    {
        return unadvertised >= advertiseThreshold;
    }

    /** @return send credits held now (including a held-back last one). */
    int sendCredits()
    {
        return sendCredits;
    }

    /** @return receive buffers posted and not yet advertised. */
    int unadvertised()
    {
        return unadvertised;
    }
}
