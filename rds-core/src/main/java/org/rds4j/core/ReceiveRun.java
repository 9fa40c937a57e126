package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;

/**
 * The run of frames the stack gathers before it queues them (docs/receive-runs.md): consecutive data frames of one
 * transport read for one socket, lying back to back in the transport's buffer, kept there by reference and queued
 * with one copy into the socket's receive ring when something else comes or the transport ends its frames. Only a
 * transport that keeps its frames in place until then ({@code ConnectionPath.onHeldFrame}) starts runs. The thread
 * running the duty cycle only.
 */
final class ReceiveRun
{
    /** The socket the frames are for; null while no run is gathered. */
    RdsSocketImpl socket;
    /** Every frame's sender (the receive path's one object per sending port). */
    InetSocketAddress sender;
    DirectBuffer buffer;
    /** The first frame's header. */
    int start;
    /** Where the last frame ends. */
    int end;
    int payloadBytes;
    int frames;

    /**
     * Adds the frame if it continues this run: for the same socket from the same sender, starting where the run ends
     * in the same buffer, and the run then within {@code maxBytes}. One sender a run: a run that waits outside the
     * ring gives each message its sender as it is.
     *
     * @param frame  the frame's header.
     * @param length its payload's length.
     * @return whether it was added.
     */
    boolean extend(
        final RdsSocketImpl socket, final InetSocketAddress sender, final DirectBuffer buffer, final int frame,
        final int length, final int maxBytes)
    {
        final int frameEnd = frame + RdsHeader.LENGTH + length;
        if (socket != this.socket || sender != this.sender || buffer != this.buffer || frame != end ||
            frameEnd - start > maxBytes)
        {
            return false;
        }
        end = frameEnd;
        payloadBytes += length;
        frames++;
        return true;
    }

    /** Starts a run with one frame ({@code frame} is its header's index, {@code length} its payload's). */
    void start(
        final RdsSocketImpl socket, final InetSocketAddress sender, final DirectBuffer buffer, final int frame,
        final int length)
    {
        this.socket = socket;
        this.sender = sender;
        this.buffer = buffer;
        start = frame;
        end = frame + RdsHeader.LENGTH + length;
        payloadBytes = length;
        frames = 1;
    }

    /** The run is queued: nothing is gathered, and the transport's buffer is not referenced any more. */
    void clear()
    {
        socket = null;
        sender = null;
        buffer = null;
        frames = 0;
    }
}
