package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AckRequestBudgetTest
{
    @Test
    void asksAfterEightUnackedPackets()
    {
        final AckRequestBudget budget = new AckRequestBudget();
        for (int packet = 1; packet <= 8; packet++)
        {
            assertFalse(budget.charge(64), "packet " + packet);
        }
        assertTrue(budget.charge(64), "packet 9 asks");
        for (int packet = 10; packet <= 17; packet++)
        {
            assertFalse(budget.charge(64), "packet " + packet);
        }
        assertTrue(budget.charge(64), "packet 18 asks");
    }

    @Test
    void asksWhenSixteenMebibytesRunOut()
    {
        final AckRequestBudget budget = new AckRequestBudget();
        final int mib = 1 << 20;
        for (int i = 0; i < 7; i++)
        {
            assertFalse(budget.charge(mib), "MiB " + (i + 1));
        }
        // 7 packets and 7 MiB charged: one packet and 9 MiB are left, so a 9 MiB message fits
        assertFalse(budget.charge(9 * mib));
        assertTrue(budget.charge(1), "the budget is spent");
        for (int i = 0; i < 7; i++)
        {
            assertFalse(budget.charge(2 * mib), "after the reset, 2 MiB message " + (i + 1));
        }
        assertTrue(budget.charge(3 * mib), "14 MiB charged: 3 MiB more exceeds 16 MiB");
    }
}
