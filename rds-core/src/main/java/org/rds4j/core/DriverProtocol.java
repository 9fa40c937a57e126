package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.rds4j.RdsSocket;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The frames between a driver and its clients: one UNIX domain socket connection per client process, and from the
 * client also its ring in shared memory ({@link DriverRing}). Little-endian. Every frame starts with a 12-byte
 * header:
 * <pre>
 *   0  int   length   the whole frame, header included
 *   4  byte  type
 *   5  3 bytes, zero
 *   8  int   socket   the client's number for the socket; 0 for frames about no socket
 * </pre>
 * An address takes 24 bytes: its length (4 or 16) in one byte, three zero bytes, the port as an int, then 16
 * bytes with the address first.
 * <p>
 * Client to driver (the body after the header). After HELLO, the client numbers its frames 1, 2, ... (wrapping to 1
 * after {@code Integer.MAX_VALUE}) and writes each either into its ring, as a record of that number, or on the
 * connection after a SEQ frame with the number (rds4j's client does that only with a frame longer than the ring
 * takes); the driver runs them in that order, whichever way each came.
 * <pre>
 *   HELLO     int version, int 0, long pid                  first frame, socket 0, on the connection
 *   SEQ       int number, int 0                             socket 0, on the connection: the frame after it has
 *                                                           this number
 *   DOORBELL  -                                             socket 0, on the connection: the ring has frames for
 *                                                           a sleeping driver
 *   OPEN      int SO_SNDBUF, int SO_RCVBUF                  a new socket
 *   BIND      int call, int transport ordinal, address      replied
 *   OPTION    int call, int option, long value              replied: SO_SNDBUF, SO_RCVBUF, RDS_CONG_MONITOR
 *   SEND      address (the destination), payload            admitted by the client: never refused
 *   CANCEL    int call, int 0, address                      replied with the count
 *   CLOSE     -
 *   CONSUMED  long bytes                                    the client's application took so many more bytes
 *                                                           (at most what was delivered and not yet reported)
 *   CONG_WAIT int returned, int 0, address                  a send was refused for congestion: say when it may
 *                                                           pass (returned: the refusal reached the caller)
 *   QUERY     int call, int what                            replied with text: connections, counters or clients
 *   PEERS     int on, int 0                                 socket 0: send PEER frames (the stack's peer listener)
 * </pre>
 * Driver to client. After WELCOME, the driver sends its frames in batches (runs of whole frames), numbered 1, 2, ...
 * (wrapping as the client's numbers do): each batch is a record of the client's second ring, under its number, or
 * goes on the connection after a SEQ frame; the client takes the batches in the order of their numbers.
 * <pre>
 *   WELCOME   int version, int n, long pid, long start (epoch ms), int largest socket buffer, int m, the file names
 *             in the driver's directory of the client's ring (n bytes of UTF-8) and of the ring to the client (m
 *             bytes), the allow-list as UTF-8 text
 *   SEQ       int number, int length                        socket 0, on the connection: the next length bytes
 *                                                           are the frames of batch number (at most MAX_FRAME)
 *   DOORBELL  -                                             socket 0, on the connection: the ring to the client has
 *                                                           batches for a sleeping reader
 *   REPLY     int call, int result, long value, UTF-8 text
 *   DELIVER   address (the sender), payload
 *   NOTIFY    int kind, int 0, address
 *   RELEASED  long bytes    the socket's send-buffer bytes freed (acked or cancelled) since it opened
 *   PEER      int up, int 0, address (local), address (peer)     socket 0; ports 0
 * </pre>
 * The driver checks every client frame ({@link #checkClientFrame}) before it acts on it: a client that sends a
 * malformed one is cut off.
 * <p>
 * Beside the frames, a client reads two files of the driver's directory: {@code congestion} ({@link CongestionBoard})
 * and, since version 4, {@code heartbeat} ({@link DriverHeartbeat}), by which it lets a stopped or hung driver go.
 */
final class DriverProtocol
{
    static final int VERSION = 7;
    static final String SOCKET_FILE = "driver.sock";

    static final int HEADER = 12;
    static final int ADDRESS = 24;
    /** WELCOME's body before the ring's file name. */
    static final int WELCOME_FIXED = 32;
    /** The largest frame: a SEND or DELIVER of the largest message. */
    static final int MAX_FRAME = HEADER + ADDRESS + RdsSocket.MAX_MESSAGE_SIZE;

    static final int LENGTH_OFFSET = 0;
    static final int TYPE_OFFSET = 4;
    static final int SOCKET_OFFSET = 8;

    // client to driver
    static final byte HELLO = 1;
    static final byte OPEN = 2;
    static final byte BIND = 3;
    static final byte OPTION = 4;
    static final byte SEND = 5;
    static final byte CANCEL = 6;
    static final byte CLOSE = 7;
    static final byte CONSUMED = 8;
    static final byte CONG_WAIT = 10;
    static final byte QUERY = 11;
    static final byte PEERS = 12;
    static final byte SEQ = 13;
    static final byte DOORBELL = 14;
    // driver to client
    static final byte WELCOME = 64;
    static final byte REPLY = 65;
    static final byte DELIVER = 66;
    static final byte NOTIFY = 67;
    static final byte RELEASED = 68;
    static final byte PEER = 69;

    static final int OPTION_SNDBUF = 1;
    static final int OPTION_RCVBUF = 2;
    static final int OPTION_CONG_MONITOR = 3;

    static final int QUERY_CONNECTIONS = 1;
    static final int QUERY_COUNTERS = 2;
    static final int QUERY_CLIENTS = 3;

    private DriverProtocol()
    {
    }

    /** @return the number of a client's frame after {@code number}: 1, 2, ... wrapping to 1 after the largest int. */
    static int nextFrameNumber(final int number)
    {
        return number == Integer.MAX_VALUE ? 1 : number + 1;
    }

    /**
     * Checks a frame from a client, whole in {@code buffer}, before anything acts on it.
     *
     * @return null if well formed, else what is wrong.
     */
    static String checkClientFrame(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < HEADER || length > MAX_FRAME || buffer.getInt(offset + LENGTH_OFFSET) != length)
        {
            return "bad length " + length;
        }
        if (buffer.getByte(offset + 5) != 0 || buffer.getShort(offset + 6) != 0)
        {
            return "reserved header bytes set";
        }
        final byte type = buffer.getByte(offset + TYPE_OFFSET);
        final int socket = buffer.getInt(offset + SOCKET_OFFSET);
        final int body = length - HEADER;
        final int b = offset + HEADER;
        switch (type)
        {
            case HELLO:
                return socket == 0 && body == 16 && buffer.getInt(b + 4) == 0 ? null : "bad HELLO";
            case QUERY:
                return socket == 0 && body == 8 ? null : "bad QUERY";
            case SEQ:
                return socket == 0 && body == 8 && buffer.getInt(b) > 0 && buffer.getInt(b + 4) == 0 ? null : "bad SEQ";
            case DOORBELL:
                return socket == 0 && body == 0 ? null : "bad DOORBELL";
            case PEERS:
                return socket == 0 && body == 8 && (buffer.getInt(b) & ~1) == 0 && buffer.getInt(b + 4) == 0 ? null :
                    "bad PEERS";
            case OPEN:
                return socket > 0 && body == 8 && buffer.getInt(b) > 0 && buffer.getInt(b + 4) > 0 ? null : "bad OPEN";
            case BIND:
                return socket > 0 && body == 8 + ADDRESS ? checkAddress(buffer, b + 8) : "bad BIND";
            case OPTION:
                return socket > 0 && body == 16 ? null : "bad OPTION";
            case SEND:
                return socket > 0 && body >= ADDRESS ? checkAddress(buffer, b) : "bad SEND";
            case CANCEL:
                return socket > 0 && body == 8 + ADDRESS && buffer.getInt(b + 4) == 0 ? checkAddress(buffer, b + 8) :
                    "bad CANCEL";
            case CONG_WAIT:
                return socket > 0 && body == 8 + ADDRESS && buffer.getInt(b + 4) == 0 ? checkAddress(buffer, b + 8) :
                    "bad CONG_WAIT";
            case CONSUMED:
                return socket > 0 && body == 8 && buffer.getLong(b) > 0 ? null : "bad CONSUMED";
            case CLOSE:
                return socket > 0 && body == 0 ? null : "bad CLOSE";
            default:
                return "unknown frame type " + type;
        }
    }

    private static String checkAddress(final DirectBuffer buffer, final int offset)
    {
        final int length = buffer.getByte(offset);
        if (length != 4 && length != 16)
        {
            return "bad address length " + length;
        }
        if (buffer.getByte(offset + 1) != 0 || buffer.getShort(offset + 2) != 0)
        {
            return "reserved address bytes set";
        }
        final int port = buffer.getInt(offset + 4);
        return port < 0 || port > 0xFFFF ? "bad port " + port : null;
    }

    /** Writes a frame's header; returns the body's offset. */
    static int putHeader(final MutableDirectBuffer buffer, final int offset, final int length, final byte type,
        final int socket)
    {
        buffer.putInt(offset + LENGTH_OFFSET, length);
        buffer.putByte(offset + TYPE_OFFSET, type);
        buffer.putByte(offset + 5, (byte)0);
        buffer.putShort(offset + 6, (short)0);
        buffer.putInt(offset + SOCKET_OFFSET, socket);
        return offset + HEADER;
    }

    /** Writes an address block; returns the offset after it. */
    static int putAddress(final MutableDirectBuffer buffer, final int offset, final InetSocketAddress address)
    {
        final InetAddress ip = address.getAddress();
        buffer.setMemory(offset, ADDRESS, (byte)0);
        if (ip instanceof Inet4Address)
        {
            buffer.putByte(offset, (byte)4);
            // an Inet4Address's hash code is its address, in network order: no array allocated per frame
            buffer.putInt(offset + 8, ip.hashCode(), java.nio.ByteOrder.BIG_ENDIAN);
        }
        else
        {
            buffer.putByte(offset, (byte)16);
            buffer.putBytes(offset + 8, ip.getAddress());
        }
        buffer.putInt(offset + 4, address.getPort());
        return offset + ADDRESS;
    }
}
