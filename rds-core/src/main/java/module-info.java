/**
 * The transport-independent RDS layer behind {@code org.rds4j}. Exported: {@code org.rds4j.core} (opening a
 * stack with {@link org.rds4j.core.StackOptions}, reading stacks' info files) and the Transport SPI
 * {@code org.rds4j.core.spi}, neither of them stable API yet; the wire format is shared with rds4j's own
 * transports only.
 */
// "module": the transports named in the qualified export are not in this module's build;
// "requires-transitive-automatic": agrona 1.x has no module descriptor, only an Automatic-Module-Name
@SuppressWarnings({"module", "requires-automatic", "requires-transitive-automatic"})
module org.rds4j.core
{
    requires transitive org.rds4j;
    // StackOptions and the SPI take agrona clocks, idle strategies, buffers and counters
    requires transitive org.agrona.core;
    // agrona's buffers use sun.misc.Unsafe, but agrona 1.x, having no descriptor, cannot ask for jdk.unsupported:
    // without this, an application started with -m would fail with NoClassDefFoundError: sun/misc/Unsafe
    requires jdk.unsupported;
    // a stack registers its MXBean (StackMBean) in the platform MBean server
    requires java.management;
    requires org.jctools.core;
    requires org.slf4j;

    exports org.rds4j.core;
    exports org.rds4j.core.spi;
    exports org.rds4j.core.wire to org.rds4j.transport.tcp, org.rds4j.transport.ib;

    uses org.rds4j.core.spi.TransportFactory;

    provides org.rds4j.RdsStackProvider with org.rds4j.core.CoreStackProvider;
}
