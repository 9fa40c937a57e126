/**
 * RDS over InfiniBand and RoCE. Exported: {@link org.rds4j.transport.ib.IbConfig}, the transport's settings;
 * the verbs and rdma_cm binding ({@code org.rds4j.transport.ib.verbs}) is internal. The transport is
 * registered with every stack as a {@link org.rds4j.core.spi.TransportFactory}.
 */
// JNA has no module descriptor, only an Automatic-Module-Name
@SuppressWarnings("requires-automatic")
module org.rds4j.transport.ib
{
    requires transitive org.rds4j.core;
    requires org.slf4j;
    requires com.sun.jna;

    exports org.rds4j.transport.ib;

    provides org.rds4j.core.spi.TransportFactory with org.rds4j.transport.ib.IbTransportFactory;
}
