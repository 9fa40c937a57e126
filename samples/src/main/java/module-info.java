/**
 * The {@code rds} command line. As a module it shows what an application module needs: {@code org.rds4j}
 * (read through {@code org.rds4j.core}), the transports it configures, and nothing else; the stack and the
 * transports it does not name (IB) are bound as services at start-up.
 */
// HdrHistogram has neither a module descriptor nor an Automatic-Module-Name: its name comes from its file name
@SuppressWarnings("requires-automatic")
module org.rds4j.samples
{
    // rds info reads stacks' info files with org.rds4j.core.StackInfoReader
    requires org.rds4j.core;
    requires org.rds4j.transport.tcp;
    requires info.picocli;
    requires HdrHistogram;
    // every --json output and what reads it back (org.rds4j.samples.Json)
    requires com.fasterxml.jackson.jr.ob;
    requires com.fasterxml.jackson.core;
    // rds stress reports its process's CPU time and memory (com.sun.management)
    requires jdk.management;

    // picocli fills the commands' options by reflection
    opens org.rds4j.samples to info.picocli;
}
