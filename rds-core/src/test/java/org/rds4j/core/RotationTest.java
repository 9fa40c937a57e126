package org.rds4j.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link Rotation}: the duty cycle serves every element once a cycle, from a start that moves on by one. */
class RotationTest
{
    private final Rotation rotation = new Rotation();

    /** One duty cycle over a list of {@code size}: the indices in the order served. */
    private List<Integer> cycle(final int size)
    {
        final List<Integer> served = new ArrayList<>();
        final int first = rotation.first(size);
        for (int turn = 0; turn < size; turn++)
        {
            served.add(Rotation.index(first, turn, size));
        }
        return served;
    }

    @Test
    void withTwoTheFirstServedAlternatesAndBothAreServedEachCycle()
    {
        assertEquals(List.of(0, 1), cycle(2));
        assertEquals(List.of(1, 0), cycle(2));
        assertEquals(List.of(0, 1), cycle(2));
        assertEquals(List.of(1, 0), cycle(2));
    }

    @Test
    void withThreeEachIsFirstInTurnAndNoneIsAlwaysLast()
    {
        assertEquals(List.of(0, 1, 2), cycle(3));
        assertEquals(List.of(1, 2, 0), cycle(3));
        assertEquals(List.of(2, 0, 1), cycle(3));
        assertEquals(List.of(0, 1, 2), cycle(3));
    }

    @Test
    void aListThatShrinksOrIsEmptyStartsAgainAtZero()
    {
        assertEquals(List.of(0, 1, 2), cycle(3));
        assertEquals(List.of(1, 2, 0), cycle(3));
        assertEquals(List.of(2, 0, 1), cycle(3));
        assertEquals(List.of(0, 1), cycle(2), "the start was past the shrunk list's end");
        assertEquals(List.of(), cycle(0));
        assertEquals(List.of(0), cycle(1));
        assertEquals(List.of(1, 0), cycle(2));
        assertEquals(List.of(0, 1), cycle(2));
    }
}
