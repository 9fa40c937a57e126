package org.rds4j.transport.ib;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IbCreditsTest
{
    private final IbCredits credits = new IbCredits();

    @Test
    void theLastCreditIsHeldBackWhileThereIsNothingToAdvertise()
    {
        credits.reset(4);
        assertEquals(3, credits.grab(10), "one of four is kept for a credit update");
        assertEquals(0, credits.grab(1));
        assertEquals(1, credits.sendCredits());

        credits.onReceivesPosted(2);
        assertEquals(1, credits.grab(1), "with something to advertise the last credit may go");
        assertEquals(2, credits.takeAdvertisement(), "and the frame it pays for carries the update");
        assertEquals(0, credits.sendCredits());
        assertEquals(0, credits.grab(1), "no credit, no post: the fragment stays queued");
    }

    @Test
    void creditsFromThePeerAddUpAndAreCappedAt16Bits()
    {
        credits.reset(1);
        assertEquals(0, credits.grab(1), "the one credit is held back");
        credits.onCreditsReceived(255);
        credits.onCreditsReceived(9);
        assertEquals(265, credits.sendCredits());
        assertEquals(10, credits.grab(10));
        credits.onCreditsReceived(IbCredits.MAX_SEND_CREDITS);
        assertEquals(IbCredits.MAX_SEND_CREDITS, credits.sendCredits());
    }

    @Test
    void aHeaderAdvertisesAtMost255()
    {
        credits.reset(10);
        credits.onReceivesPosted(300);
        assertEquals(255, credits.takeAdvertisement());
        assertEquals(45, credits.takeAdvertisement());
        assertEquals(0, credits.takeAdvertisement());
    }

    @Test
    void sixteenUnadvertisedReceivesAskForAnUpdate()
    {
        credits.reset(10);
        credits.onReceivesPosted(15);
        assertFalse(credits.advertiseSoon());
        credits.onReceivesPosted(1);
        assertTrue(credits.advertiseSoon());
        credits.takeAdvertisement();
        assertFalse(credits.advertiseSoon());
    }

    @Test
    void resetForgetsTheOldConnection()
    {
        credits.reset(5);
        credits.onReceivesPosted(7);
        credits.reset(3);
        assertEquals(3, credits.sendCredits());
        assertEquals(0, credits.unadvertised());
    }

    @Test
    void noInitialCreditFromThePeerTurnsFlowControlOffAsTheKernelDoes()
    {
        credits.reset(0); // a kernel peer: its private data always carries credit 0
        assertFalse(credits.flowControl());
        assertEquals(1000, credits.grab(1000), "every fragment may go without credits");
        assertEquals(1, credits.grab(1));
        assertEquals(0, credits.sendCredits());
        credits.onCreditsReceived(255);
        assertEquals(300, credits.grab(300), "credits the peer advertises anyway change nothing");

        credits.onReceivesPosted(20);
        assertTrue(credits.advertiseSoon(), "this side still advertises: a kernel with flow control on needs it");
        assertEquals(20, credits.takeAdvertisement());

        credits.reset(1024); // the next connection, to a peer that gave credits
        assertTrue(credits.flowControl());
        assertEquals(1023, credits.grab(2000));
    }
}
