package org.rds4j.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

class ArgsTest
{
    @Test
    void valuesTakeTheToolsUnitsAndDefaultsStayWithTheReader()
    {
        final Args args = Args.parse("rds4j-source", "--size", "1k", "--warmup", "0.5", "--duration", "2s", "--idle", "spin",
            "--claim", "--receivers=4", "--mtu", "64k");
        assertEquals("rds4j-source", args.command());
        assertEquals(1024, args.size("size", 64));
        assertEquals(Duration.ofMillis(500), args.duration("warmup", Duration.ofSeconds(2)));
        assertEquals(Duration.ofSeconds(2), args.duration("duration", Duration.ofSeconds(5)));
        assertEquals(Duration.ofSeconds(120), args.duration("timeout", Duration.ofSeconds(120)));
        assertEquals("spin", args.str("idle", "yield"));
        assertEquals("backoff", args.str("agent-idle", "backoff"));
        assertTrue(args.flag("claim"));
        assertFalse(args.flag("trace"));
        assertEquals(4, args.integer("receivers", 1));
        assertTrue(args.has("receivers"));
        assertFalse(args.has("peers"));
        assertEquals(65536, args.size("mtu", 1408));
    }

    @Test
    void anUnknownOrMisspeltOptionOrABadValueIsAUsageError()
    {
        assertEquals("Unknown options: '--durration', '5'",
            assertThrows(ParameterException.class, () -> Args.parse("nio-sink", "--durration", "5")).getMessage());
        assertTrue(assertThrows(ParameterException.class, () -> Args.parse("nio-sink", "--rt", "many")).getMessage()
            .startsWith("Invalid value for option '--rt': 'many' is not an int"));
        assertTrue(assertThrows(ParameterException.class, () -> Args.parse("nio-sink", "--size", "1x")).getMessage()
            .contains("'1x' is not a size"));
        assertEquals("Missing required parameter: 'COMMAND'",
            assertThrows(ParameterException.class, () -> Args.parse("--size", "64")).getMessage());
    }

    @Test
    void readingAnUndeclaredOptionIsAProgrammingError()
    {
        assertThrows(IllegalStateException.class, () -> Args.parse("report").str("resluts", "results.jsonl"));
    }

    @Test
    void handoffIsACommandOfItsOwnAndTheHelpNamesIt()
    {
        assertEquals("handoff", Args.parse("handoff").command());
        final StringWriter help = new StringWriter();
        new CommandLine(Args.spec()).usage(new PrintWriter(help, true));
        assertTrue(help.toString().contains("handoff"), help.toString());
    }

    @Test
    void theHelpListsEveryOption()
    {
        final StringWriter help = new StringWriter();
        new CommandLine(Args.spec()).usage(new PrintWriter(help, true));
        for (final String option : new String[] {"COMMAND", "--size", "--warmup", "--io", "--agent-idle", "--mtu", "--bundler",
            "--results", "--docs"})
        {
            assertTrue(help.toString().contains(option), option + " in\n" + help);
        }
    }
}
