package org.rds4j.core;

/**
 * Whether a sender that appends its frames ({@link RdsSocketImpl}'s append) wakes a thread waiting to lead the duty
 * cycle as it gives the lock back. Such a thread (one blocked in {@code receive} on the sending stack, say) that finds
 * the lock held parks for at most {@link DutyCycleLock#HOLD_FOLLOWER_PARK_NS}; woken at the end of each hold, it
 * tried to lead between two messages, lost, and parked again: at 64 B one-way ({@code rds stress}, whose receiving
 * thread waits on the sending socket) that was 11,000-17,700 wake-ups a second and a sixth to a third of a core,
 * taken from the receiving process on a 2-core machine. A sender streaming whole batches needs nobody: it sends each full
 * batch itself and takes the acks in the same cycle. So:
 * <pre>
 *   a batch begins after one this sender filled and sent itself   -> streaming: no wake at the holds' ends
 *   a batch begins after one sent by another thread (not filled)  -> not streaming: wake one at each hold's end
 * </pre>
 * While streaming, the frames of a batch the sender stops before it is full wait for the parked thread's next
 * look (at most {@link DutyCycleLock#HOLD_FOLLOWER_PARK_NS}), as they wait for an agent thread that stepped aside
 * for the sender; a sender that never fills a batch (requests at a rate, a window of a few) has each frame sent as
 * soon as the woken thread leads. State of the sending thread, under the duty cycle's hold.
 */
final class FollowerWakes
{
    private boolean lastBatchFilled;
    private boolean streaming;

    /**
     * A frame was appended.
     *
     * @param beganBatch it is the first of its connection's batch (none waited to be sent before it).
     * @return whether the hold's end wakes a thread waiting to lead.
     */
    boolean appended(final boolean beganBatch)
    {
        if (beganBatch)
        {
            streaming = lastBatchFilled;
            lastBatchFilled = false;
        }
        return !streaming;
    }

    /** The sender sends the batch it appended to itself, because it is full. */
    void filled()
    {
        lastBatchFilled = true;
    }
}
