package org.rds4j.transport.ib.verbs;

import com.sun.jna.Pointer;
import org.agrona.concurrent.UnsafeBuffer;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * An rdma_cm event channel ({@code struct rdma_event_channel}) with a non-blocking fd. {@link #next} hands
 * out one event at a time through a reused {@link CmEvent}, which must be {@link CmEvent#ack() acked} before
 * the next one is taken (and before its id is destroyed). Not thread safe.
 */
public final class CmEventChannel implements AutoCloseable
{
    private final long channel;
    private final int fd;
    private final NativeBlock scratch = new NativeBlock(64);
    private final CmEvent event = new CmEvent();
    private boolean closed;

    public CmEventChannel()
    {
        AbiCheck.verify();
        channel = VerbsException.check(LibRdmaCm.rdma_create_event_channel(), "rdma_create_event_channel");
        fd = new UnsafeBuffer(channel, 4).getInt(CM_CHANNEL_FD);
        CompletionQueue.setNonBlocking(fd);
        scratch.view().putInt(8, fd);
        scratch.view().putShort(12, (short)LibC.POLLIN);
    }

    /** @return the {@code struct rdma_event_channel *}. */
    public long channel()
    {
        return channel;
    }

    /** @return the channel's file descriptor (non-blocking). */
    public int fd()
    {
        return fd;
    }

    /**
     * @param timeoutMs how long to wait; 0 to only look.
     * @return the next event (ack it before asking again), or null if none came in time.
     */
    public CmEvent next(final int timeoutMs)
    {
        if (event.pending)
        {
            throw new IllegalStateException("ack the previous rdma_cm event first");
        }
        if (LibRdmaCm.rdma_get_cm_event(channel, scratch.address()) != 0)
        {
            if (timeoutMs == 0 || LibC.poll(scratch.address() + 8, 1, timeoutMs) <= 0 ||
                LibRdmaCm.rdma_get_cm_event(channel, scratch.address()) != 0)
            {
                return null;
            }
        }
        event.load(scratch.view().getLong(0));
        return event;
    }

    /** Destroys the channel; every id on it must be destroyed first. */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            LibRdmaCm.rdma_destroy_event_channel(channel);
        }
    }

    /** One rdma_cm event, valid until {@link #ack()}. */
    public static final class CmEvent
    {
        private static final String[] NAMES = new String[32];

        private final byte[] privateData = new byte[256];
        private long event;
        private boolean pending;
        private int type;
        private int status;
        private long id;
        private long listenId;
        private int privateDataLength;

        void load(final long address)
        {
            event = address;
            pending = true;
            final UnsafeBuffer view = new UnsafeBuffer(address, CM_EVENT_CONN_PRIVATE_DATA_LEN + 1);
            id = view.getLong(CM_EVENT_ID);
            listenId = view.getLong(CM_EVENT_LISTEN_ID);
            type = view.getInt(CM_EVENT_EVENT);
            status = view.getInt(CM_EVENT_STATUS);
            privateDataLength = 0;
            final long data = view.getLong(CM_EVENT_CONN_PRIVATE_DATA);
            if (data != 0 && (type == RDMA_CM_EVENT_CONNECT_REQUEST || type == RDMA_CM_EVENT_ESTABLISHED ||
                type == RDMA_CM_EVENT_CONNECT_RESPONSE || type == RDMA_CM_EVENT_REJECTED))
            {
                privateDataLength = view.getByte(CM_EVENT_CONN_PRIVATE_DATA_LEN) & 0xFF;
                new UnsafeBuffer(data, privateDataLength).getBytes(0, privateData, 0, privateDataLength);
            }
        }

        /** @return {@code RDMA_CM_EVENT_*}. */
        public int type()
        {
            return type;
        }

        /** @return the event's status (0, or a negative errno / a reject reason). */
        public int status()
        {
            return status;
        }

        /** @return the id the event is about (for CONNECT_REQUEST: a new id for the incoming connection). */
        public long id()
        {
            return id;
        }

        /** @return the listening id (CONNECT_REQUEST only). */
        public long listenId()
        {
            return listenId;
        }

        /** @return the private data's length (connect request, response, established, rejected). */
        public int privateDataLength()
        {
            return privateDataLength;
        }

        /** @return a copy of the private data, valid until the next event; {@link #privateDataLength()} bytes. */
        public byte[] privateData()
        {
            return privateData;
        }

        public String typeName()
        {
            return name(type);
        }

        /** @return librdmacm's name for an event type ({@code rdma_event_str}). */
        public static String name(final int type)
        {
            if (type >= 0 && type < NAMES.length)
            {
                if (NAMES[type] == null)
                {
                    NAMES[type] = new Pointer(LibRdmaCm.rdma_event_str(type)).getString(0);
                }
                return NAMES[type];
            }
            return new Pointer(LibRdmaCm.rdma_event_str(type)).getString(0);
        }

        /** Releases the event ({@code rdma_ack_cm_event}). */
        public void ack()
        {
            if (pending)
            {
                pending = false;
                LibRdmaCm.rdma_ack_cm_event(event);
            }
        }

        @Override
        public String toString()
        {
            return typeName() + " status " + status + " id 0x" + Long.toHexString(id);
        }
    }
}
