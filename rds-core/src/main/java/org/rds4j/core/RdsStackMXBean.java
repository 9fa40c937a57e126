package org.rds4j.core;

import java.util.List;
import java.util.Map;

import javax.management.ConstructorParameters;
import javax.management.ObjectName;

/**
 * What a stack shows in JMX (JConsole, VisualVM, any JMX exporter): its counters, connections and sockets, the
 * facts {@code rds info} shows. Every open {@link CoreStack} registers one in the platform MBean server as
 * {@code org.rds4j:type=Stack,name=<stack name>} and unregisters it when it closes; see {@link #objectName}
 * for names that need quoting and for two open stacks of one name.
 * <p>
 * Nothing is kept up to date for it: each attribute is read when asked. The counters are read directly; the
 * connections and sockets are read by a function run on the stack's agent, as {@link CoreStack#connections()}
 * is, so a read waits for the agent's next duty cycle (with {@link org.rds4j.Threading#INVOKER} the reading
 * thread runs one itself if no other thread is running one).
 */
public interface RdsStackMXBean
{
    /** The JMX domain of rds4j's MBeans. */
    String DOMAIN = "org.rds4j";

    /**
     * The name a stack's MBean is registered under.
     *
     * @param stackName the stack's {@link org.rds4j.RdsStackConfig#name()}; quoted with
     *                  {@link ObjectName#quote} if it holds a character an unquoted value may not
     *                  ({@code , = : " * ?}, a newline) or is empty.
     * @param instance  1 for the first open stack of that name; a second stack of the same name opened while the
     *                  first is still open gets the smallest instance not in use, 2 and up, as an extra key
     *                  {@code instance=N}.
     * @return {@code org.rds4j:type=Stack,name=<name>} with {@code ,instance=N} when {@code instance > 1}.
     */
    static String objectName(final String stackName, final int instance)
    {
        final boolean quote = stackName.isEmpty() || stackName.chars().anyMatch(c -> ",=:\"*?\n".indexOf(c) >= 0);
        return DOMAIN + ":type=Stack,name=" + (quote ? ObjectName.quote(stackName) : stackName) +
            (instance > 1 ? ",instance=" + instance : "");
    }

    /** @return the stack's name ({@link org.rds4j.RdsStackConfig#name()}). */
    String getName();

    /** @return who runs the stack's agent: {@code AGENT} or {@code INVOKER} ({@link org.rds4j.Threading}). */
    String getThreading();

    /** @return every counter by name, as {@link CoreStack#counters()} returns them (a table in JMX). */
    Map<String, Long> getCounters();

    /** @return how many connections the stack has, in any state (the loopback ones included). */
    int getConnectionCount();

    /** @return how many of the stack's connections are {@code UP}. */
    int getConnectionsUp();

    /** @return how many bound sockets the stack has. */
    int getSocketCount();

    /** @return the stack's connections, as {@code rds info} lists them. */
    List<ConnectionView> getConnections();

    /** @return the stack's bound sockets, as {@code rds info} lists them. */
    List<SocketView> getSockets();

    /** A connection (one node pair on one transport) at the moment it was read. */
    final class ConnectionView
    {
        private final String local;
        private final String remote;
        private final String transport;
        private final String state;
        private final long nextTxSequence;
        private final long nextRxSequence;
        private final int unacked;

        /**
         * @param local          local address.
         * @param remote         peer address.
         * @param transport      transport name ({@code tcp}, {@code ib}, {@code loop}).
         * @param state          {@code DOWN}, {@code CONNECTING}, {@code HANDSHAKE} or {@code UP}.
         * @param nextTxSequence sequence number the next new message gets.
         * @param nextRxSequence sequence number expected next from the peer.
         * @param unacked        messages queued or sent and not yet acknowledged.
         */
        @ConstructorParameters({"local", "remote", "transport", "state", "nextTxSequence", "nextRxSequence", "unacked"})
        public ConnectionView(
            final String local, final String remote, final String transport, final String state,
            final long nextTxSequence, final long nextRxSequence, final int unacked)
        {
            this.local = local;
            this.remote = remote;
            this.transport = transport;
            this.state = state;
            this.nextTxSequence = nextTxSequence;
            this.nextRxSequence = nextRxSequence;
            this.unacked = unacked;
        }

        /** @return local address. */
        public String getLocal()
        {
            return local;
        }

        /** @return peer address. */
        public String getRemote()
        {
            return remote;
        }

        /** @return transport name. */
        public String getTransport()
        {
            return transport;
        }

        /** @return {@code DOWN}, {@code CONNECTING}, {@code HANDSHAKE} or {@code UP}. */
        public String getState()
        {
            return state;
        }

        /** @return sequence number the next new message gets. */
        public long getNextTxSequence()
        {
            return nextTxSequence;
        }

        /** @return sequence number expected next from the peer. */
        public long getNextRxSequence()
        {
            return nextRxSequence;
        }

        /** @return messages queued or sent and not yet acknowledged. */
        public int getUnacked()
        {
            return unacked;
        }

        @Override
        public String toString()
        {
            return local + " -> " + remote + " " + transport + " " + state + " tx " + nextTxSequence + " rx " +
                nextRxSequence + " unacked " + unacked;
        }
    }

    /** A bound socket at the moment it was read. */
    final class SocketView
    {
        private final String address;
        private final String transport;
        private final long sendQueuedBytes;
        private final int sendBufferBytes;
        private final long receiveQueuedBytes;
        private final int receiveBufferBytes;
        private final boolean congested;

        /**
         * @param address            local address and port, {@code a.b.c.d:port} or {@code [v6]:port}.
         * @param transport          its transport's name.
         * @param sendQueuedBytes    payload bytes sent and not yet acknowledged.
         * @param sendBufferBytes    its SO_SNDBUF, in bytes.
         * @param receiveQueuedBytes payload bytes received and not yet read by the application.
         * @param receiveBufferBytes its SO_RCVBUF, in bytes.
         * @param congested          whether its port is marked congested (receive buffer overrun).
         */
        @ConstructorParameters({"address", "transport", "sendQueuedBytes", "sendBufferBytes", "receiveQueuedBytes",
            "receiveBufferBytes", "congested"})
        public SocketView(
            final String address, final String transport, final long sendQueuedBytes, final int sendBufferBytes,
            final long receiveQueuedBytes, final int receiveBufferBytes, final boolean congested)
        {
            this.address = address;
            this.transport = transport;
            this.sendQueuedBytes = sendQueuedBytes;
            this.sendBufferBytes = sendBufferBytes;
            this.receiveQueuedBytes = receiveQueuedBytes;
            this.receiveBufferBytes = receiveBufferBytes;
            this.congested = congested;
        }

        /** @return local address and port. */
        public String getAddress()
        {
            return address;
        }

        /** @return its transport's name. */
        public String getTransport()
        {
            return transport;
        }

        /** @return payload bytes sent and not yet acknowledged. */
        public long getSendQueuedBytes()
        {
            return sendQueuedBytes;
        }

        /** @return its SO_SNDBUF, in bytes. */
        public int getSendBufferBytes()
        {
            return sendBufferBytes;
        }

        /** @return payload bytes received and not yet read by the application. */
        public long getReceiveQueuedBytes()
        {
            return receiveQueuedBytes;
        }

        /** @return its SO_RCVBUF, in bytes. */
        public int getReceiveBufferBytes()
        {
            return receiveBufferBytes;
        }

        /** @return whether its port is marked congested. */
        public boolean isCongested()
        {
            return congested;
        }

        @Override
        public String toString()
        {
            return address + " " + transport + " send " + sendQueuedBytes + "/" + sendBufferBytes + " recv " +
                receiveQueuedBytes + "/" + receiveBufferBytes + (congested ? " congested" : "");
        }
    }
}
